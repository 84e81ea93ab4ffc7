// RemoteRepo: the `--repo URL --ref BRANCH --workdir DIR` source. A bare clone
// in the work directory, fetched on demand, whose local branch records the
// commit the daemon accepted.
//
// Bare, because desired state is read from commits (GitRepo::Tree): a working
// tree would be a second copy to keep in step and one that can be half-written.
// Opening creates an empty repository with an `origin` remote and no network
// I/O; the first Fetch() completes the clone, so a clone cut short by a crash
// is resumed, not restarted. file:// URLs and plain paths work (tests).
//
// The daemon's cycle, on a timer or a webhook:
//   fetched = Fetch();  if fetched == applied: done
//   DescendsFrom(fetched, applied) false → history rewrite: report; hold or go on
//   UpdateBranch(fetched, allow_rewrite); Tree(fetched); ChangedPaths(applied, fetched)
//
// Fetch() and UpdateBranch() are for one thread at a time (the daemon loop);
// repo() may be used from others meanwhile.
#pragma once

#include <functional>
#include <string>

#include "base/status.h"
#include "source/credentials.h"
#include "source/git_repo.h"

namespace tpu::source {

struct RemoteOptions {
  std::string url;       // https://, ssh://, scp-like, file:// or a local path
  std::string branch;    // "main"; the remote's refs/heads/<branch>
  std::string workdir;   // created if missing; reused if it is our clone of `url`
  GitCredentials credentials;
};

enum class BranchUpdate {
  kUnchanged,    // already there
  kCreated,      // the first commit ever accepted
  kFastForward,  // a descendant of the previous one
  kRewritten,    // not a descendant: history was rewritten, and allowed
};
const char* BranchUpdateName(BranchUpdate u);

class RemoteRepo {
 public:
  // InvalidArgument for an empty URL or a bad branch name; FailedPrecondition
  // when `workdir` holds something else (a non-repository, or a clone of
  // another URL).
  static Result<RemoteRepo> Open(const RemoteOptions& options);

  // Downloads `branch` from origin and returns the commit it points at there.
  // Unavailable when the remote cannot be reached (retry later);
  // PermissionDenied for refused credentials or host keys; NotFound when the
  // remote has no such branch. Messages carry the URL without credentials.
  // `should_stop` is polled while data arrives (shutdown, or a deadline);
  // true aborts with DeadlineExceeded. libgit2 1.5 has no connect or read
  // timeout, so a server that accepts and then stalls is not interrupted: run
  // Fetch where a stuck call cannot hold up shutdown.
  // Uses its own repository handle: trees may be read meanwhile.
  Result<std::string> Fetch(const std::function<bool()>& should_stop = nullptr);

  // The commit the local branch points at (the last one accepted); NotFound
  // before the first UpdateBranch.
  Result<std::string> BranchCommit() const;

  // Points the local branch at `commit` (fetched before). A move to a commit
  // that does not descend from the current one is refused with
  // FailedPrecondition unless `allow_rewrite`.
  Result<BranchUpdate> UpdateBranch(const std::string& commit, bool allow_rewrite);

  // Trees, ancestry and diffs of the clone.
  const GitRepo& repo() const { return repo_; }
  const RemoteOptions& options() const { return options_; }

 private:
  RemoteRepo(RemoteOptions options, GitRepo repo) : options_(std::move(options)), repo_(std::move(repo)) {}
  std::string BranchRef() const { return "refs/heads/" + options_.branch; }
  std::string TrackingRef() const { return "refs/remotes/origin/" + options_.branch; }

  RemoteOptions options_;
  GitRepo repo_;
};

}  // namespace tpu::source
