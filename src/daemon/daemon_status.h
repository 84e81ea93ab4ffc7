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

#include "nodes/group_status.h"
#include "nodes/node_joiner.h"
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
  kWaitingForWorkloads, // a scale-down held until admitted Kueue workloads fit
  kWaitingForWindow,    // actions held until a change window opens (spec.changeWindows)
  kDrifted,             // drift reported, left alone (spec.drift: warn)
  kHeld,                // actions spec.mode cleanupOnly does not allow
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
  // The reservations its pools and groups name, and what its latest plan
  // takes from them (plan/reservations.h); blocked: VMs held back for lack of room.
  std::vector<plan::ReservationUse> reservations;
  bool vanished = false;     // directory removed; owned resources remain
  // Drift: actions the target needed although its manifests had not changed.
  std::string drift_mode = "correct";  // spec.drift
  std::vector<std::string> drift;      // "update nodePool serve-0", of the latest plan
  bool drift_corrected = false;        // correct mode applied them
  int64_t drift_since = 0;             // wall seconds (UTC) drift was first seen; 0: none
  double drift_seconds = 0;            // since then, at the snapshot
  // Actions the change windows or cleanupOnly hold.
  int held_actions = 0;
  std::string held_reason;
  int64_t held_until = 0;              // wall seconds a closed window opens; 0: unknown or none
};

// One flavor of the Kueue quota this daemon keeps (kueue/quota.h).
struct FlavorQuotaStatus {
  std::string flavor;
  std::string accelerator;
  std::string topology;
  int64_t declared_chips = 0;  // what git declares
  int64_t ready_chips = 0;     // on Ready, schedulable nodes of those pools
  int64_t nominal_quota = 0;   // what was written (declared, or min(declared, ready))
  int64_t possible_chips = 0;  // of declared: autoscaled pools', whose nodes come on demand
};

// A laddered slice below its best rung, as /status shows it.
struct LadderSliceStatus {
  std::string target;  // "project/cluster"
  std::string pool;    // the slot, "<TPUNodePool>-<slice>"
  int rung = 0;
  int rungs = 0;
  std::string capacity;  // its rung's (manifest::CapacityName)
  int tries = 0;         // moves tried since it landed there
  int failures = 0;      // of them, failed (a stockout, a refused call)
  double next_try_seconds = 0;  // from the snapshot
  std::string last;      // the latest try's outcome, or why none was made
};

// A delete or shrink the scale-down gate holds (kueue/scale_down.h).
struct ScaleDownWait {
  std::string target;
  std::vector<std::string> pools;
  std::string message;
  double waited_seconds = 0;
};

// A DWS booking (a ProvisioningRequest; kueue/bookings.h).
struct BookingStatus {
  std::string name;  // "namespace/name"
  std::string resize_request;
  std::vector<std::string> node_pools;
  std::string reason;
};

// DWS flex-start wired into Kueue (kueue/flex_start_sync.h) and its bookings.
struct FlexStartStatus {
  std::vector<std::string> flavors;  // with flex-start pools in git
  std::string admission_check;       // ours, when it is on the queue
  std::string note;                  // flex-start pools, yet no check: why
  std::vector<BookingStatus> live, expired, revoked;
};

// Quota that follows capacity, in the one Kubernetes cluster the daemon talks to.
struct KueueStatus {
  bool enabled = false;     // Kubernetes access configured
  std::string target;       // the target whose Cluster.spec.kueue this cluster follows
  std::string queue;        // "ClusterQueue/tpu-queue" or "Cohort/all-tpus"
  std::string mode;         // "declared" | "ready"
  std::string api_version;  // "kueue.x-k8s.io/v1beta2"
  std::vector<FlavorQuotaStatus> flavors;
  std::vector<ScaleDownWait> scale_down_waits;
  FlexStartStatus flex_start;
  std::string last_error;   // of the latest sync or gate check; "" when it worked
  uint64_t syncs = 0;
  uint64_t sync_errors = 0;
  uint64_t queue_writes = 0;  // syncs that changed the queue
  uint64_t writes = 0;          // Kueue objects written (flavors and the queue)
  uint64_t skipped_writes = 0;  // … not written because the server already held exactly that
};

// A demand-driven node pool (src/demand/) as the daemon last decided about it.
struct DemandPoolStatus {
  std::string name;
  std::string jobset;  // "namespace/name"
  std::string status;  // the cloud's, or CREATING for a create decided in that pass
  int chips = 0;
  std::string state;   // "in use", "creating", "error", "deleting", "grace until …"
};

// Demand-driven pools in the one Kubernetes cluster the daemon talks to.
struct DemandStatus {
  bool enabled = false;  // Kubernetes access configured
  std::string target;    // whose Cluster.spec.demand applies; "" when none
  bool synced = false;   // Pods and JobSets listed
  std::vector<DemandPoolStatus> pools;
  int chips = 0;         // in those pools
  std::string error;     // why no target applies, when several could
  uint64_t events = 0;   // Kubernetes Events recorded (refusals, creates)
};

// TPUNodeGroup VMs joining as nodes of the Kubernetes cluster the daemon
// talks to (docs/architecture.md, "TPUNodeGroup nodes"): filled in by the
// Daemon from its join thread. Never carries a token.
struct NodeGroupsStatus {
  bool enabled = false;
  std::string target;  // whose TPUNodeGroups join; "" when none
  std::vector<nodes::GroupNodeStatus> groups;
  nodes::JoinCounters counters;
  uint64_t passes = 0;
};

// Leader election (--leader-elect): filled in by the Daemon (daemon.h) from the elector.
struct LeaderStatus {
  bool enabled = false;
  bool leader = true;     // without election, every replica acts
  std::string identity;
  std::string lease;      // "namespace/name"
};

// A sharded `watch` (docs/scaling.md): the shards this replica holds.
struct ShardStatus {
  bool enabled = false;
  std::string identity;
  int shards = 0;            // in the set
  std::vector<int> held;
  int live_replicas = 0;
  int fair_share = 0;
  int owned_targets = 0;     // declared targets of the held shards, at the last reconcile
  uint64_t acquired = 0, takeovers = 0, released = 0, lost = 0, errors = 0;
  std::string last_error;
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
  KueueStatus kueue;
  std::vector<LadderSliceStatus> ladder;  // slices below their best capacity rung
  DemandStatus demand;  // filled in by the Daemon (daemon.h) from its DemandPort
  NodeGroupsStatus node_groups;
  LeaderStatus leader;
  ShardStatus shards;  // filled in by the Daemon from its ShardKeeper

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
