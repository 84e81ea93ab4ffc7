// RemoteRepo: bare clone, fetch, local branch updates. See remote.h.
#include "source/remote.h"

#include <filesystem>

#include "source/git_util.h"
#include "source/remote_callbacks.h"

namespace tpu::source {
namespace {

namespace fs = std::filesystem;

constexpr char kOriginUrlKey[] = "remote.origin.url";

// libgit2 messages may quote the URL as given; take out any "user:secret@".
std::string Scrub(std::string message, const std::string& url) {
  std::string redacted = RedactUrl(url);
  if (redacted == url) return message;
  size_t host = url.find("://") + 3;
  std::string userinfo = url.substr(host, url.size() - redacted.size());  // "user:secret@"
  for (size_t at; (at = message.find(userinfo)) != std::string::npos;) message.erase(at, userinfo.size());
  return message;
}

}  // namespace

const char* BranchUpdateName(BranchUpdate u) {
  switch (u) {
    case BranchUpdate::kUnchanged: return "unchanged";
    case BranchUpdate::kCreated: return "created";
    case BranchUpdate::kFastForward: return "fast-forward";
    case BranchUpdate::kRewritten: return "rewritten";
  }
  return "?";
}

Result<RemoteRepo> RemoteRepo::Open(const RemoteOptions& o) {
  EnsureLibgit2();
  if (o.url.empty()) return Status::InvalidArgument("remote URL is empty");
  if (o.workdir.empty()) return Status::InvalidArgument("no work directory given for the clone of " + RedactUrl(o.url));
  int valid = 0;
  if (o.branch.empty() || git_reference_name_is_valid(&valid, ("refs/heads/" + o.branch).c_str()) < 0 || !valid) {
    return Status::InvalidArgument("\"" + o.branch + "\" is not a valid branch name");
  }
  const std::string where = RedactUrl(o.url);
  std::error_code ec;
  if (!fs::exists(o.workdir, ec) || fs::is_empty(o.workdir, ec)) {
    git_repository_init_options io = GIT_REPOSITORY_INIT_OPTIONS_INIT;
    io.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH;
    io.initial_head = o.branch.c_str();
    git_repository* raw = nullptr;
    if (int rc = git_repository_init_ext(&raw, o.workdir.c_str(), &io); rc < 0) {
      return GitStatus(rc, "create work directory " + o.workdir);
    }
    git_repository_free(raw);
  }
  Result<GitRepo> repo = GitRepo::Open(o.workdir);
  if (repo.status().code() == Status::Code::kNotFound) {
    return Status::FailedPrecondition("work directory " + o.workdir +
                                      " is not empty and not a git repository; empty it or choose another");
  }
  if (!repo.ok()) return repo.status();
  if (!repo->workdir().empty()) {
    return Status::FailedPrecondition("work directory " + o.workdir +
                                      " is a checkout, not the bare clone tpu-provisioner makes; choose another");
  }
  // The origin remote is read and written as plain config: libgit2 1.5's
  // git_remote_lookup/create leak a regex match block (about 20 KB) per call
  // (fixed upstream in libgit2#6382), too much for a daemon fetching every minute.
  RepoHandle& h = *repo->handle_;
  std::lock_guard lock(h.mu);
  git_config* raw = nullptr;
  if (int rc = git_repository_config(&raw, h.repo.get()); rc < 0) {
    return GitStatus(rc, "read config of " + o.workdir);
  }
  GitPtr<git_config> config(raw);
  git_buf url = GIT_BUF_INIT;
  int rc = git_config_get_string_buf(&url, config.get(), kOriginUrlKey);
  if (rc == GIT_ENOTFOUND) {
    // Fresh, or a crash between init and here: add it now. The fetch refspec
    // is for people running `git fetch` in the work directory; we pass our own.
    if ((rc = git_config_set_string(config.get(), kOriginUrlKey, o.url.c_str())) < 0 ||
        (rc = git_config_set_string(config.get(), "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")) < 0) {
      return GitStatus(rc, "add remote " + where + " to " + o.workdir);
    }
    return RemoteRepo(o, *repo);
  }
  if (rc < 0) return GitStatus(rc, "read remote of " + o.workdir);
  std::string existing(url.ptr, url.size);
  git_buf_dispose(&url);
  if (existing != o.url) {
    return Status::FailedPrecondition("work directory " + o.workdir + " is a clone of " + RedactUrl(existing) +
                                      ", not " + where + "; empty it or choose another");
  }
  return RemoteRepo(o, *repo);
}

Result<std::string> RemoteRepo::Fetch(const std::function<bool()>& should_stop) {
  const std::string where = RedactUrl(options_.url);
  {
    // A handle of its own, so a long download does not lock out tree reads;
    // the shared handle's object database rescans packs when it misses an object.
    git_repository* raw_repo = nullptr;
    int rc = git_repository_open_ext(&raw_repo, options_.workdir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
    if (rc < 0) return GitStatus(rc, "fetch " + where + ": open " + options_.workdir);
    GitPtr<git_repository> repo(raw_repo);
    // Anonymous (Open() checked the configured URL is this one, and the
    // refspec is ours) and without url.*.insteadOf rewriting: the URL given is
    // the URL used. Both also keep clear of the leak described in Open().
    git_remote_create_options ro = GIT_REMOTE_CREATE_OPTIONS_INIT;
    ro.repository = repo.get();
    ro.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF;
    git_remote* raw = nullptr;
    if (rc = git_remote_create_with_opts(&raw, options_.url.c_str(), &ro); rc < 0) {
      return GitStatus(rc, "fetch " + where);
    }
    GitPtr<git_remote> remote(raw);
    RemoteCallbackState state;
    state.credentials = &options_.credentials;
    state.url = options_.url;
    state.should_stop = should_stop;
    git_fetch_options fo = GIT_FETCH_OPTIONS_INIT;
    SetRemoteCallbacks(&fo.callbacks, &state);
    // Prune, so a branch deleted upstream reads as NotFound, not as its last commit.
    fo.prune = GIT_FETCH_PRUNE;
    fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
    fo.update_fetchhead = 0;
    std::string spec = "+" + BranchRef() + ":" + TrackingRef();
    char* specs[] = {spec.data()};
    git_strarray refspecs = {specs, 1};
    if (rc = git_remote_fetch(remote.get(), &refspecs, &fo, "tpu-provisioner: fetch"); rc < 0) {
      if (!state.failure.ok()) return state.failure.WithContext("fetch " + where);
      Status s = GitStatus(rc, "fetch " + where);
      std::string msg = Scrub(s.message(), options_.url);
      if (s.code() == Status::Code::kPermissionDenied) return Status::PermissionDenied(msg);
      // Unreachable, refused, cut off, or a bad pack: all worth retrying later.
      return Status::Unavailable(msg);
    }
  }
  Result<std::string> commit = repo_.ResolveCommit(TrackingRef());
  if (commit.status().code() == Status::Code::kNotFound) {
    return Status::NotFound("fetch " + where + ": branch " + options_.branch + " not found on the remote");
  }
  return commit;
}

Result<std::string> RemoteRepo::BranchCommit() const {
  Result<std::string> c = repo_.ResolveCommit(BranchRef());
  if (c.status().code() == Status::Code::kNotFound) {
    return Status::NotFound(BranchRef() + " in " + options_.workdir + ": no commit accepted yet");
  }
  return c;
}

Result<BranchUpdate> RemoteRepo::UpdateBranch(const std::string& commit, bool allow_rewrite) {
  Result<git_oid> target = ParseOid(commit);
  if (!target.ok()) return target.status();
  Result<std::string> current = repo_.ResolveCommit(BranchRef());
  if (!current.ok() && current.status().code() != Status::Code::kNotFound) return current.status();
  BranchUpdate kind = BranchUpdate::kCreated;
  if (current.ok()) {
    if (*current == commit) return BranchUpdate::kUnchanged;
    Result<bool> descends = repo_.DescendsFrom(commit, *current);
    if (!descends.ok()) return descends.status();
    kind = *descends ? BranchUpdate::kFastForward : BranchUpdate::kRewritten;
    if (kind == BranchUpdate::kRewritten && !allow_rewrite) {
      return Status::FailedPrecondition(BranchRef() + ": " + ShortId(commit) + " does not descend from " +
                                        ShortId(*current) + " (history rewritten upstream); branch not moved");
    }
  }
  RepoHandle& h = *repo_.handle_;
  std::lock_guard lock(h.mu);
  git_reference* raw = nullptr;
  std::string log = std::string("tpu-provisioner: ") + BranchUpdateName(kind);
  int rc;
  if (kind == BranchUpdate::kCreated) {
    rc = git_reference_create(&raw, h.repo.get(), BranchRef().c_str(), &*target, /*force=*/0, log.c_str());
  } else {
    // Compare-and-swap against what we just read: nothing else should move it, and if something did we want to know.
    Result<git_oid> old = ParseOid(*current);
    rc = git_reference_create_matching(&raw, h.repo.get(), BranchRef().c_str(), &*target, /*force=*/1, &*old,
                                       log.c_str());
  }
  if (rc < 0) return GitStatus(rc, "move " + BranchRef() + " to " + ShortId(commit));
  git_reference_free(raw);
  return kind;
}

}  // namespace tpu::source
