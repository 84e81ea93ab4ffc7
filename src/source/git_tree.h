// GitTree: the manifest::Tree of one commit, read through libgit2.
//
// The daemon reads desired state from a commit, never from files on disk, so a
// half-written checkout is never seen (docs/architecture.md, "The daemon"). Entry ids are blob ids, so
// the loader's parse cache hits across commits for unchanged files. Symlinks
// are reported as kSymlink and never followed. Copies share the repository;
// safe to use from several threads (calls are serialised on the repository).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "manifest/tree.h"

namespace tpu::source {

struct RepoHandle;

class GitTree : public manifest::Tree {
 public:
  // Made by GitRepo::Tree(); `tree_id` is the raw 20-byte id of the commit's tree.
  GitTree(std::shared_ptr<RepoHandle> repo, std::string commit, std::array<unsigned char, 20> tree_id);

  Result<std::vector<manifest::TreeEntry>> List(const std::string& dir) const override;
  Result<std::string> Read(const std::string& path) const override;
  // "commit 1a2b3c4"
  std::string Describe() const override;

  // The full 40-hex id of the commit this tree belongs to.
  const std::string& commit() const { return commit_; }

 private:
  std::shared_ptr<RepoHandle> repo_;
  std::string commit_;
  std::array<unsigned char, 20> tree_id_;
};

}  // namespace tpu::source
