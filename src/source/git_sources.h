// The RevisionSources over a local git checkout: the commit HEAD points at
// (the default), or the checkout's files on disk (--worktree).
#pragma once

#include <memory>
#include <string>

#include "source/revision_source.h"
#include "source/git_repo.h"

namespace tpu::source {

// kAppliedRef in `repo`: its commit, "" when absent; and moving it.
Result<std::string> LoadAppliedRef(const GitRepo& repo);
Status StoreAppliedRef(GitRepo repo, const std::string& commit);

// HEAD of an existing checkout (`--repo PATH`).
class CheckoutSource : public RevisionSource {
 public:
  explicit CheckoutSource(GitRepo repo) : repo_(std::move(repo)) {}
  Result<Revision> Current() override;
  Result<Revision> AtCommit(const std::string& commit) override;
  Result<bool> DescendsFrom(const std::string& commit, const std::string& ancestor) override {
    return repo_.DescendsFrom(commit, ancestor);
  }
  Result<std::string> LoadApplied() override { return LoadAppliedRef(repo_); }
  Status StoreApplied(const std::string& commit) override { return StoreAppliedRef(repo_, commit); }
  std::string Describe() const override { return "checkout " + repo_.workdir() + " (HEAD)"; }

 private:
  GitRepo repo_;
};

// A directory's files as they are on disk (`--worktree`), uncommitted
// changes included. `repo` (optional) names the revision after HEAD.
class WorktreeSource : public RevisionSource {
 public:
  WorktreeSource(std::string root, std::unique_ptr<GitRepo> repo)
      : root_(std::move(root)), repo_(std::move(repo)) {}
  Result<Revision> Current() override;
  Result<Revision> AtCommit(const std::string& commit) override;
  // A working tree has no history to rewrite.
  Result<bool> DescendsFrom(const std::string&, const std::string&) override { return true; }
  std::string Describe() const override { return "working tree " + root_; }

 private:
  std::string root_;
  std::unique_ptr<GitRepo> repo_;
};

}  // namespace tpu::source
