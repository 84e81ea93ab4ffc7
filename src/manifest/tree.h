// Tree: the read-only view of a repository that the manifest loader walks.
//
// The loader knows nothing of git: a Tree is either a directory on disk
// (DiskTree, for `validate --repo PATH` and `--worktree`) or a commit's tree
// read through libgit2 (source/git_tree.h). Paths are relative to the repo root,
// '/'-separated, never absolute and never containing "..". Entry ids are content
// ids (git blob ids; for disk, a digest of the bytes) so parsed files can be cached
// by id across loads.
//
// Thread-safety: List and Read may be called from several threads at once (the
// loader reads files on every core, manifest/file_parser.h).
//
// Symbolic links: a tree follows links whose target stays inside the repo and
// reports them as what they point to; a link that leaves the repo, dangles or
// loops is listed as kSymlink and never read through (the loader reports it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace tpu::manifest {

struct TreeEntry {
  enum class Kind { kFile, kDirectory, kSymlink, kOther };
  std::string name;  // the last path component
  Kind kind = Kind::kOther;
  uint64_t size = 0;  // bytes, for files
  std::string id;     // content id: a file's blob id or digest, a directory's tree id
                      // when the tree has one for free; "" when it cannot tell cheaply
  std::string link_target;  // kSymlink only: where the link points, for messages
};

class Tree {
 public:
  virtual ~Tree() = default;
  // The entries of directory `dir` ("" is the root), sorted by name.
  // NotFound when `dir` does not exist.
  virtual Result<std::vector<TreeEntry>> List(const std::string& dir) const = 0;
  // The bytes of file `path`. REQUIRES: `path` names a kFile entry.
  virtual Result<std::string> Read(const std::string& path) const = 0;
  // Where this tree came from, for messages: "commit 1a2b3c4", "working tree /repo".
  virtual std::string Describe() const = 0;
};

}  // namespace tpu::manifest
