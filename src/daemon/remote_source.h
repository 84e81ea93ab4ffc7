// RemoteSource: the RevisionSource of `--repo URL --ref BRANCH --workdir DIR`,
// over source::RemoteRepo (a bare clone). Fetch() downloads the branch and
// records what it found on the clone's local branch (rewrites allowed: the
// reconciler, not the clone, decides whether to follow a rewrite); Current()
// is that commit, so a restart with the remote unreachable resumes from the
// last commit fetched.
#pragma once

#include <string>

#include "daemon/revision_source.h"
#include "source/remote.h"

namespace tpu::daemon {

class RemoteSource : public RevisionSource {
 public:
  explicit RemoteSource(source::RemoteRepo remote) : remote_(std::move(remote)) {}

  Status Fetch() override;
  bool remote() const override { return true; }
  // NotFound before the first successful fetch.
  Result<Revision> Current() override;
  Result<Revision> AtCommit(const std::string& commit) override;
  Result<bool> DescendsFrom(const std::string& commit, const std::string& ancestor) override {
    return remote_.repo().DescendsFrom(commit, ancestor);
  }
  std::string Describe() const override {
    return remote_.options().url + " (" + remote_.options().branch + ")";
  }

 private:
  source::RemoteRepo remote_;
};

}  // namespace tpu::daemon
