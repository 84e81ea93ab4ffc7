// DaemonStatus: what the reconcile loop knows about itself, as plain values —
// the one snapshot /status, /readyz and /metrics are rendered from. Copied out
// of the Reconciler under its lock, so HTTP threads never see a half-updated
// reconcile.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plan/model.h"

namespace tpu::daemon {

// Where a target stands after its latest reconcile.
enum class TargetState {
  kInSync,              // live matches declared (or everything planned was applied)
  kPending,             // changes planned, not applied: --dry-run
  kBlocked,             // manifest errors or conflicts: nothing planned
  kRefused,             // a guard refused the plan (mass delete, prevent-destroy)
  kSuspended,           // Cluster.spec.suspend
  kFailed,              // an apply or refresh failed; retried with backoff
  kWaitingForCapacity,  // a stockout; retried on a slower clock
  kInterrupted,         // the apply was cancelled (shutdown); the next run resumes
};
const char* TargetStateName(TargetState s);  // "in-sync", "pending", …

struct TargetReport {
  std::string key;  // "project/cluster"
  TargetState state = TargetState::kInSync;
  std::string revision;      // the revision last planned for this target
  plan::Summary last_plan;   // actions of its latest plan (counted even when not executable)
  std::map<std::string, int> last_plan_actions;  // by ActionKindName, noop excluded
  std::vector<std::string> errors;  // why blocked, refused or failed (manifest errors first)
  std::string last_error;    // the first error of the latest failure; kept until it succeeds
  int consecutive_failures = 0;
  double retry_in_seconds = 0;  // > 0 while backing off
  int declared_chips = 0;
  int live_chips = 0;
  bool vanished = false;     // directory removed; owned resources remain
};

struct HistoryRewrite {
  std::string from;  // the commit applied before
  std::string to;    // the new head, not a descendant of `from`
  bool held = false; // --refuse-history-rewrite: still reconciling `from`
};

struct DaemonStatus {
  std::string source;             // RevisionSource::Describe()
  std::string revision;           // the revision of the latest reconcile
  std::string last_applied_revision;  // the latest revision reconciled to the end
  bool ready = false;             // a first reconcile completed
  bool dry_run = false;
  std::string last_error;         // source, load or refresh error of the latest reconcile
  std::vector<std::string> repo_errors;  // manifest errors outside any target
  std::optional<HistoryRewrite> history_rewrite;  // the latest one seen
  std::vector<TargetReport> targets;  // sorted by key

  // Counters over the daemon's life, for /metrics.
  uint64_t reconciles = 0;
  uint64_t reconcile_errors = 0;
  uint64_t files_parsed = 0;       // manifest files parsed (parse-cache misses)
  uint64_t files_parsed_last = 0;  // by the latest load
  uint64_t history_rewrites = 0;
  uint64_t refreshes = 0;
  std::map<std::string, uint64_t> planned_actions;  // by kind, executable plans, noop excluded
  std::map<std::string, uint64_t> applied_actions;  // by result: applied, failed, waiting, …
  double last_reconcile_seconds = 0;
  // Reconcile durations: counts per bucket upper bound (seconds), sum, count.
  std::vector<std::pair<double, uint64_t>> duration_buckets;
  double duration_sum = 0;
  uint64_t duration_count = 0;
};

}  // namespace tpu::daemon
