// DiskTree: a Tree over a directory on disk (`validate --repo PATH`, the
// daemon's --worktree mode).
//
// Ids are git blob ids (SHA-1 of "blob <size>\0" + bytes), computed while
// listing, so ParseCache entries are shared with trees read from git commits
// and a file rewritten with the same size and mtime is still seen as changed.
// Files larger than kMaxHashedBytes get no id (the loader refuses them unread).
//
// Symlinks are resolved with realpath(): a link inside the repo is listed as
// what it points to; a link that leaves the repo, dangles or loops is listed
// as kSymlink and Read() refuses it. Not thread-safe only in that the disk may
// change between calls; the object itself is immutable.
#pragma once

#include <memory>
#include <string>

#include "manifest/tree.h"

namespace tpu::manifest {

class DiskTree : public Tree {
 public:
  static constexpr uint64_t kMaxHashedBytes = 1 << 20;

  // NotFound when `root` is not a directory.
  static Result<std::unique_ptr<DiskTree>> Open(const std::string& root);

  Result<std::vector<TreeEntry>> List(const std::string& dir) const override;
  Result<std::string> Read(const std::string& path) const override;
  std::string Describe() const override { return "working tree " + root_; }

 private:
  explicit DiskTree(std::string root) : root_(std::move(root)) {}
  // The real path of `rel`, or "" when it leaves the repo or does not resolve.
  std::string Resolve(const std::string& rel) const;
  std::string root_;  // absolute, symlinks resolved
};

// The git blob id of `bytes`, hex.
std::string GitBlobId(std::string_view bytes);

}  // namespace tpu::manifest
