// RevisionSource: where the reconcile loop gets desired state from.
//
// A revision is a commit (its tree read through libgit2, so a half-written
// checkout is never seen) or, with --worktree, the files on disk. The loop asks
// for the current revision on every wake-up; the parse cache makes an
// unchanged revision cheap. Remote sources fetch in Fetch(); local ones have
// nothing to fetch. Implementations are used from the loop's thread only.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "manifest/tree.h"

namespace tpu::source {

// Where a git source keeps the commit last reconciled, so a restart still
// sees a force-push that happened while it was down.
inline constexpr const char* kAppliedRef = "refs/tpu-provisioner/applied";

struct Revision {
  // A full commit id, or for --worktree "worktree" (+ "@<HEAD>" when the
  // directory is a checkout): what /status and the metrics label show.
  std::string id;
  bool is_commit = false;
  std::string message;  // a commit's message (its trailers say break-glass); "" for a worktree
  std::unique_ptr<manifest::Tree> tree;
};

class RevisionSource {
 public:
  virtual ~RevisionSource() = default;
  // Brings the local copy up to date with its remote; OK and nothing done for
  // local checkouts. Errors are transient (the loop retries at the next poll).
  virtual Status Fetch() { return Status::OK(); }
  virtual bool remote() const { return false; }
  // The revision to reconcile now.
  virtual Result<Revision> Current() = 0;
  // The revision of an earlier commit, for holding on it after a history
  // rewrite (--refuse-history-rewrite).
  virtual Result<Revision> AtCommit(const std::string& commit) = 0;
  // True when `commit` descends from (or is) `ancestor`. NotFound when either
  // is unknown, which the loop reports like a rewrite.
  virtual Result<bool> DescendsFrom(const std::string& commit, const std::string& ancestor) = 0;
  // The commit last reconciled as kept across restarts (kAppliedRef); "" when
  // none was kept yet, or the source keeps none (--worktree).
  virtual Result<std::string> LoadApplied() { return std::string(); }
  virtual Status StoreApplied(const std::string& commit) { return Status::OK(); }
  // "checkout /repo (HEAD)", "https://host/repo.git (main)", for logs.
  virtual std::string Describe() const = 0;
};

}  // namespace tpu::source
