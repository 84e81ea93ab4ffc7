// GitRepo: open, resolve, read trees, ancestry, tree diffs. See git_repo.h.
#include "source/git_repo.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <set>

#include "source/git_util.h"

namespace tpu::source {
namespace {

Result<GitPtr<git_commit>> LookupCommit(git_repository* repo, const std::string& hex) {
  Result<git_oid> oid = ParseOid(hex);
  if (!oid.ok()) return oid.status();
  git_commit* c = nullptr;
  int rc = git_commit_lookup(&c, repo, &*oid);
  if (rc == GIT_ENOTFOUND) return Status::NotFound("commit " + ShortId(hex) + " is not in the repository");
  if (rc < 0) return GitStatus(rc, "read commit " + ShortId(hex));
  return GitPtr<git_commit>(c);
}

Result<GitPtr<git_tree>> CommitTree(git_repository* repo, const std::string& hex) {
  Result<GitPtr<git_commit>> commit = LookupCommit(repo, hex);
  if (!commit.ok()) return commit.status();
  git_tree* t = nullptr;
  if (int rc = git_commit_tree(&t, commit->get()); rc < 0) {
    return GitStatus(rc, "read tree of commit " + ShortId(hex));
  }
  return GitPtr<git_tree>(t);
}

// Why a repository that is there was refused for its owner, or OK. libgit2
// refuses repositories owned by another user (as git does since 2.35.2) and
// 1.5 reports it as "not found", which would send people looking in vain.
Status CheckOwner(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string dir = fs::exists(fs::path(path) / ".git", ec) ? path : "";
  if (dir.empty() && fs::exists(fs::path(path) / "HEAD", ec) && fs::exists(fs::path(path) / "objects", ec)) dir = path;
  struct stat st;
  if (dir.empty() || stat(dir.c_str(), &st) != 0 || st.st_uid == geteuid()) return Status::OK();
  std::string abs = fs::absolute(path, ec).lexically_normal().string();
  return Status::FailedPrecondition("open repository " + path + ": owned by uid " + std::to_string(st.st_uid) +
                                    ", not by this process (uid " + std::to_string(geteuid()) +
                                    "); git refuses it unless the git config lists it: "
                                    "git config --global --add safe.directory " + abs);
}

}  // namespace

Result<GitRepo> GitRepo::Open(const std::string& path) {
  EnsureLibgit2();
  git_repository* raw = nullptr;
  int rc = git_repository_open_ext(&raw, path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
  if (rc == GIT_ENOTFOUND || rc == GIT_EOWNER) {
    if (Status s = CheckOwner(path); !s.ok()) return s;
  }
  if (rc == GIT_ENOTFOUND) return Status::NotFound("open repository " + path + ": not a git repository");
  if (rc < 0) return GitStatus(rc, "open repository " + path);
  auto h = std::make_shared<RepoHandle>();
  h->repo.reset(raw);
  git_odb* odb = nullptr;
  if (rc = git_repository_odb(&odb, raw); rc < 0) return GitStatus(rc, "open object database of " + path);
  h->odb.reset(odb);
  return GitRepo(std::move(h));
}

std::string GitRepo::workdir() const {
  const char* w = git_repository_workdir(handle_->repo.get());
  return w ? w : "";
}
std::string GitRepo::git_dir() const { return git_repository_path(handle_->repo.get()); }
std::string GitRepo::common_dir() const { return git_repository_commondir(handle_->repo.get()); }

Result<std::string> GitRepo::HeadCommit() const {
  std::lock_guard lock(handle_->mu);
  git_reference* raw = nullptr;
  int rc = git_repository_head(&raw, handle_->repo.get());
  if (rc == GIT_EUNBORNBRANCH || rc == GIT_ENOTFOUND) {
    return Status::NotFound("HEAD of " + git_dir() + ": no commits yet");
  }
  if (rc < 0) return GitStatus(rc, "read HEAD of " + git_dir());
  GitPtr<git_reference> head(raw);
  git_object* obj = nullptr;
  if (rc = git_reference_peel(&obj, head.get(), GIT_OBJECT_COMMIT); rc < 0) {
    return GitStatus(rc, "resolve HEAD of " + git_dir());
  }
  GitPtr<git_object> commit(obj);
  return OidHex(*git_object_id(commit.get()));
}

Result<std::string> GitRepo::ResolveCommit(const std::string& rev) const {
  std::lock_guard lock(handle_->mu);
  git_object* raw = nullptr;
  int rc = git_revparse_single(&raw, handle_->repo.get(), rev.c_str());
  if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC || rc == GIT_EAMBIGUOUS) {
    return Status::NotFound("\"" + rev + "\": no such revision in " + git_dir());
  }
  if (rc < 0) return GitStatus(rc, "resolve \"" + rev + "\"");
  GitPtr<git_object> obj(raw);
  git_object* peeled = nullptr;
  if (rc = git_object_peel(&peeled, obj.get(), GIT_OBJECT_COMMIT); rc < 0) {
    return GitStatus(rc, "\"" + rev + "\" does not name a commit");
  }
  GitPtr<git_object> commit(peeled);
  return OidHex(*git_object_id(commit.get()));
}

Status GitRepo::WriteRef(const std::string& name, const std::string& commit, const std::string& why) {
  std::lock_guard lock(handle_->mu);
  git_oid oid;
  if (git_oid_fromstr(&oid, commit.c_str()) < 0) return Status::InvalidArgument("\"" + commit + "\" is not a commit id");
  git_reference* raw = nullptr;
  int rc = git_reference_create(&raw, handle_->repo.get(), name.c_str(), &oid, /*force=*/1, why.c_str());
  if (rc < 0) return GitStatus(rc, "write " + name + " in " + git_dir());
  git_reference_free(raw);
  return Status::OK();
}

Result<CommitInfo> GitRepo::Info(const std::string& commit) const {
  std::lock_guard lock(handle_->mu);
  Result<GitPtr<git_commit>> c = LookupCommit(handle_->repo.get(), commit);
  if (!c.ok()) return c.status();
  CommitInfo info;
  info.id = commit;
  const char* summary = git_commit_summary(c->get());
  info.summary = summary ? summary : "";
  const char* message = git_commit_message(c->get());
  info.message = message ? message : "";
  const git_signature* author = git_commit_author(c->get());
  info.author = std::string(author->name) + " <" + author->email + ">";
  info.time = git_commit_time(c->get());
  return info;
}

Result<GitTree> GitRepo::Tree(const std::string& commit) const {
  std::lock_guard lock(handle_->mu);
  Result<GitPtr<git_commit>> c = LookupCommit(handle_->repo.get(), commit);
  if (!c.ok()) return c.status();
  std::array<unsigned char, 20> tree_id;
  std::memcpy(tree_id.data(), git_commit_tree_id(c->get())->id, tree_id.size());
  return GitTree(handle_, commit, tree_id);
}

Result<bool> GitRepo::DescendsFrom(const std::string& commit, const std::string& ancestor) const {
  std::lock_guard lock(handle_->mu);
  git_repository* repo = handle_->repo.get();
  Result<GitPtr<git_commit>> c = LookupCommit(repo, commit);
  if (!c.ok()) return c.status();
  Result<GitPtr<git_commit>> a = LookupCommit(repo, ancestor);
  if (!a.ok()) return a.status();
  const git_oid* cid = git_commit_id(c->get());
  const git_oid* aid = git_commit_id(a->get());
  // libgit2 says a commit does not descend from itself; for us "no rewrite" is what counts.
  if (git_oid_equal(cid, aid)) return true;
  int rc = git_graph_descendant_of(repo, cid, aid);
  if (rc < 0) return GitStatus(rc, "compare history of " + ShortId(commit) + " and " + ShortId(ancestor));
  return rc == 1;
}

Result<std::vector<std::string>> GitRepo::ChangedPaths(const std::string& from, const std::string& to) const {
  std::lock_guard lock(handle_->mu);
  git_repository* repo = handle_->repo.get();
  GitPtr<git_tree> old_tree;
  if (!from.empty()) {
    Result<GitPtr<git_tree>> t = CommitTree(repo, from);
    if (!t.ok()) return t.status();
    old_tree = std::move(*t);
  }
  Result<GitPtr<git_tree>> new_tree = CommitTree(repo, to);
  if (!new_tree.ok()) return new_tree.status();
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  // Only which paths differ matters, not how: skip content sniffing.
  opts.flags = GIT_DIFF_SKIP_BINARY_CHECK;
  git_diff* raw = nullptr;
  if (int rc = git_diff_tree_to_tree(&raw, repo, old_tree.get(), new_tree->get(), &opts); rc < 0) {
    return GitStatus(rc, "diff " + (from.empty() ? std::string("empty tree") : ShortId(from)) + ".." + ShortId(to));
  }
  GitPtr<git_diff> diff(raw);
  std::set<std::string> paths;
  for (size_t i = 0, n = git_diff_num_deltas(diff.get()); i < n; ++i) {
    const git_diff_delta* d = git_diff_get_delta(diff.get(), i);
    if (d->old_file.path) paths.insert(d->old_file.path);
    if (d->new_file.path) paths.insert(d->new_file.path);
  }
  return std::vector<std::string>(paths.begin(), paths.end());
}

}  // namespace tpu::source
