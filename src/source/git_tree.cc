// GitTree: List/Read over a commit's tree. See git_tree.h.
#include "source/git_tree.h"

#include <algorithm>
#include <cstring>

#include "source/git_util.h"

namespace tpu::source {
namespace {

using manifest::TreeEntry;

// Tree paths are relative and clean (manifest/tree.h); anything else is a
// caller bug, refused before libgit2 sees it.
Status CheckPath(const std::string& path, bool allow_root) {
  if (path.empty()) {
    return allow_root ? Status::OK() : Status::InvalidArgument("empty path");
  }
  size_t start = 0;
  while (true) {
    size_t slash = path.find('/', start);
    std::string part = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty() || part == "." || part == "..") {
      return Status::InvalidArgument("\"" + path + "\": not a clean relative path");
    }
    if (slash == std::string::npos) return Status::OK();
    start = slash + 1;
  }
}

TreeEntry::Kind KindOf(git_filemode_t mode) {
  switch (mode) {
    case GIT_FILEMODE_BLOB:
    case GIT_FILEMODE_BLOB_EXECUTABLE: return TreeEntry::Kind::kFile;
    case GIT_FILEMODE_TREE: return TreeEntry::Kind::kDirectory;
    case GIT_FILEMODE_LINK: return TreeEntry::Kind::kSymlink;
    default: return TreeEntry::Kind::kOther;  // submodules (commit entries)
  }
}

// A blob the tree lists but the object database lacks is a broken repository,
// not a missing file: never NotFound, which a caller could read as "absent".
Status BlobStatus(int rc, const std::string& context) {
  Status s = GitStatus(rc, context);
  if (s.code() != Status::Code::kNotFound) return s;
  const git_error* e = git_error_last();
  return Status::Internal(context + ": corrupt or missing object: " + (e && e->message ? e->message : "not found"));
}

// The commit's root tree. REQUIRES: repo.mu held.
Result<GitPtr<git_tree>> LookupRoot(RepoHandle& repo, const std::array<unsigned char, 20>& tree_id,
                                     const std::string& describe) {
  git_oid id;
  std::memcpy(id.id, tree_id.data(), tree_id.size());
  git_tree* raw = nullptr;
  if (int rc = git_tree_lookup(&raw, repo.repo.get(), &id); rc < 0) {
    return GitStatus(rc, describe + ": read root tree");
  }
  return GitPtr<git_tree>(raw);
}

}  // namespace

GitTree::GitTree(std::shared_ptr<RepoHandle> repo, std::string commit,
                 std::array<unsigned char, 20> tree_id)
    : repo_(std::move(repo)), commit_(std::move(commit)), tree_id_(tree_id) {}

std::string GitTree::Describe() const { return "commit " + ShortId(commit_); }


Result<std::vector<TreeEntry>> GitTree::List(const std::string& dir) const {
  if (Status s = CheckPath(dir, /*allow_root=*/true); !s.ok()) return s.WithContext(Describe());
  std::lock_guard lock(repo_->mu);
  Result<GitPtr<git_tree>> root = LookupRoot(*repo_, tree_id_, Describe());
  if (!root.ok()) return root.status();
  GitPtr<git_tree> tree = std::move(*root);
  git_tree* raw = nullptr;
  if (!dir.empty()) {
    git_tree_entry* e = nullptr;
    int rc = git_tree_entry_bypath(&e, tree.get(), dir.c_str());
    if (rc == GIT_ENOTFOUND) return Status::NotFound(Describe() + ": " + dir + ": no such directory");
    if (rc < 0) return GitStatus(rc, Describe() + ": " + dir);
    GitPtr<git_tree_entry> entry(e);
    if (git_tree_entry_type(entry.get()) != GIT_OBJECT_TREE) {
      return Status::NotFound(Describe() + ": " + dir + ": not a directory");
    }
    raw = nullptr;
    if (rc = git_tree_lookup(&raw, repo_->repo.get(), git_tree_entry_id(entry.get())); rc < 0) {
      return GitStatus(rc, Describe() + ": read tree " + dir);
    }
    tree.reset(raw);
  }
  std::vector<TreeEntry> out;
  size_t n = git_tree_entrycount(tree.get());
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(tree.get(), i);
    TreeEntry entry;
    entry.name = git_tree_entry_name(e);
    entry.kind = KindOf(git_tree_entry_filemode(e));
    if (entry.kind == TreeEntry::Kind::kFile) {
      entry.id = OidHex(*git_tree_entry_id(e));
      // The header alone gives the size, without inflating the blob.
      size_t size = 0;
      git_object_t type;
      if (int rc = git_odb_read_header(&size, &type, repo_->odb.get(), git_tree_entry_id(e)); rc < 0) {
        std::string path = dir.empty() ? entry.name : dir + "/" + entry.name;
        return BlobStatus(rc, Describe() + ": " + path + " (blob " + ShortId(entry.id) + ")");
      }
      entry.size = size;
    } else if (entry.kind == TreeEntry::Kind::kDirectory) {
      // Same tree id, same subtree: the loader carries an unchanged target
      // over without listing it (git trees hold no links it would follow).
      entry.id = OidHex(*git_tree_entry_id(e));
    }
    out.push_back(std::move(entry));
  }
  // git orders a directory "a" as "a/", after "a.yaml"; the Tree contract is plain name order.
  std::sort(out.begin(), out.end(), [](const TreeEntry& a, const TreeEntry& b) { return a.name < b.name; });
  return out;
}

Result<std::string> GitTree::Read(const std::string& path) const {
  if (Status s = CheckPath(path, /*allow_root=*/false); !s.ok()) return s.WithContext(Describe());
  std::lock_guard lock(repo_->mu);
  Result<GitPtr<git_tree>> tree = LookupRoot(*repo_, tree_id_, Describe());
  if (!tree.ok()) return tree.status();
  git_tree_entry* e = nullptr;
  int rc = git_tree_entry_bypath(&e, tree->get(), path.c_str());
  if (rc == GIT_ENOTFOUND) return Status::NotFound(Describe() + ": " + path + ": no such file");
  if (rc < 0) return GitStatus(rc, Describe() + ": " + path);
  GitPtr<git_tree_entry> entry(e);
  switch (KindOf(git_tree_entry_filemode(entry.get()))) {
    case TreeEntry::Kind::kFile: break;
    case TreeEntry::Kind::kSymlink:
      return Status::FailedPrecondition(Describe() + ": " + path + ": is a symlink; symlinks are not followed");
    case TreeEntry::Kind::kDirectory:
      return Status::FailedPrecondition(Describe() + ": " + path + ": is a directory");
    case TreeEntry::Kind::kOther:
      return Status::FailedPrecondition(Describe() + ": " + path + ": is a submodule, not a file");
  }
  const git_oid* id = git_tree_entry_id(entry.get());
  git_blob* raw_blob = nullptr;
  if (rc = git_blob_lookup(&raw_blob, repo_->repo.get(), id); rc < 0) {
    return BlobStatus(rc, Describe() + ": " + path + " (blob " + ShortId(OidHex(*id)) + ")");
  }
  GitPtr<git_blob> blob(raw_blob);
  return std::string(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                     static_cast<size_t>(git_blob_rawsize(blob.get())));
}

}  // namespace tpu::source
