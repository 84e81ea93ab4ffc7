// RemoteSource: the RevisionSource of `--repo URL --ref BRANCH --workdir DIR`,
// over RemoteRepo (a bare clone). Fetch() downloads the branch and
// records what it found on the clone's local branch (rewrites allowed: the
// reconciler, not the clone, decides whether to follow a rewrite); Current()
// is that commit, so a restart with the remote unreachable resumes from the
// last commit fetched.
#pragma once

#include <string>

#include "source/child_fetch.h"
#include "source/git_sources.h"
#include "source/revision_source.h"
#include "source/remote.h"

namespace tpu::source {

class RemoteSource : public RevisionSource {
 public:
  // With `fetcher` (not owned), fetches run in a child process that a timeout
  // or a stop can abandon; without, in this thread.
  explicit RemoteSource(RemoteRepo remote, ChildFetcher* fetcher = nullptr)
      : remote_(std::move(remote)), fetcher_(fetcher) {}

  Status Fetch() override;
  bool remote() const override { return true; }
  // NotFound before the first successful fetch.
  Result<Revision> Current() override;
  Result<Revision> AtCommit(const std::string& commit) override;
  Result<bool> DescendsFrom(const std::string& commit, const std::string& ancestor) override {
    return remote_.repo().DescendsFrom(commit, ancestor);
  }
  Result<std::string> LoadApplied() override { return LoadAppliedRef(remote_.repo()); }
  Status StoreApplied(const std::string& commit) override { return StoreAppliedRef(remote_.repo(), commit); }
  std::string Describe() const override {
    return remote_.options().url + " (" + remote_.options().branch + ")";
  }

 private:
  RemoteRepo remote_;
  ChildFetcher* fetcher_;
};

}  // namespace tpu::source
