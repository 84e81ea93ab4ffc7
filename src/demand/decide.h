// Decide: one cluster's observed workloads + live node pools + git policy →
// the node pool actions to run now, the requests refused (each becomes an
// Event on its pod) and the demand-driven pools as they stand. A pure function
// of its inputs, tested as tables (decide_test.cc); the controller feeds it.
//
// Rules (docs/architecture.md, "Beside Kueue"):
// - A waiting leader gets a create of PoolName(jobset, job key) unless a pool
//   of that name (or the GKE TPU Provisioner's name for it, when that pool is
//   the original's) exists in any state or an operation on it is still running
//   (the cloud remembers in-flight creates, not us: a restart never
//   duplicates), or its retry backoff after a stockout has not passed.
// - The chips of demand-driven pools (live, in flight and created now) stay
//   within maxChips, and per namespace within maxChipsPerNamespace.
// - A pool in ERROR is deleted at once; its leader, still waiting, gets it
//   created again on a later pass (retry).
// - A pool whose JobSet completed, failed or is gone is deleted after the grace
//   period, counted from the JobSet's condition time (or from when we first saw
//   it gone). A JobSet that restarts is neither, so its pools stay. Nothing is
//   deleted for a missing JobSet before the JobSet list has been read.
// - A pool that exists for the Job but no longer fits it (another shape,
//   capacity or selectors: its spec label differs) is deleted once the JobSet
//   it was made for (its UID) and that JobSet's pods are gone, and created
//   again on a later pass; until then the leader gets an Event saying why.
// - tpu7x: a workload policy tpu-provisioner-<topology> that exists in the
//   region (the GKE TPU Provisioner's pre-created ones) is used as it is;
//   otherwise one is created for the pool and deleted after it.
// - Deletes come before creates: the same lane, and the freed chips count.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "demand/slice_request.h"
#include "demand/workload.h"
#include "plan/model.h"

namespace tpu::demand {

struct DemandInputs {
  const manifest::DemandPolicy* policy = nullptr;  // nullptr or !enabled: no creates
  ClusterRef cluster;
  std::vector<LeaderPod> leaders;                  // waiting leader pods of this cluster
  std::map<std::string, JobSetState> jobsets;      // by "ns/name"
  bool jobsets_synced = false;                     // the JobSet list has been read
  std::vector<cloud::NodePool> live_pools;         // this cluster's pools, all of them
  std::vector<cloud::WorkloadPolicy> live_policies;  // the project's workload policies
  std::set<std::string> busy_pools;                // names with a running operation
  // UIDs of the JobSets that still exist, and of those whose pods still do
  // (label jobset.sigs.k8s.io/jobset-uid): a pool recorded for a UID outside
  // this set outlived its JobSet.
  std::set<std::string> live_jobset_uids;
  std::map<std::string, TimePoint> gone_since;     // pool → first seen without a live JobSet
  std::map<std::string, TimePoint> retry_after;    // pool → no create before (stockout backoff)
  TimePoint now{};
};

// Why a waiting leader gets no pool now: a Kubernetes Event on the pod and on
// its JobSet. Every skip that is not plain progress gets one.
struct Refusal {
  LeaderPod pod;
  std::string reason;  // the Event's message
  std::string event_reason = "TPUProvisioningRefused";
  std::string type = "Warning";
};

// A demand-driven pool as `plan`/`status` show it.
struct WorkloadPool {
  std::string name;
  std::string jobset;  // "ns/name"
  std::string status;  // the cloud's, or "CREATING" for a create decided now
  int chips = 0;
  std::string state;   // "in use", "deleting", "grace until <time>", "error", "creating"
};

struct Decision {
  std::vector<plan::Action> actions;  // deletes, then creates
  std::vector<Refusal> refusals;
  std::vector<WorkloadPool> pools;
  std::map<std::string, TimePoint> gone_since;  // carried to the next call
  std::optional<TimePoint> next_due;            // a grace period ends
  int chips_in_use = 0;                          // demand-driven chips after the actions
};

Decision Decide(const DemandInputs& in);

// The TargetPlan key under which demand actions run: "project/cluster (demand)".
std::string DemandTargetKey(const ClusterRef& cluster);

}  // namespace tpu::demand
