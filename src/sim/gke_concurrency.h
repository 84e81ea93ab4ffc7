// GKE's rules on operations that run at the same time (docs/emulator.md,
// "Concurrency"): one operation per node pool; a cluster-level operation
// (create, delete, upgrade of the cluster) excludes every other operation on
// the cluster; operations on different pools of one cluster run together, up
// to the cluster's concurrent-operations quota (5 in GKE). Sources: GKE's
// troubleshooting page on concurrent operations, terraform-provider-google
// #15205 / #15579, magic-modules #8828.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "sim/cloud_errors.h"
#include "sim/cloud_state.h"

namespace tpu::sim {

// The refusal a new operation on `pool_key` (a node pool of `cluster_key`)
// gets while others run, or nothing when it may start:
//   400 FAILED_PRECONDITION "Cluster is running incompatible operation O."
//       while a cluster-level operation runs;
//   400 FAILED_PRECONDITION "Operation O is currently creating a node pool for
//       cluster C. Please wait and try again once it is done." while the pool
//       has an operation of its own;
//   429 RESOURCE_EXHAUSTED "Too many operations: cluster "C" hits the
//       concurrent operations quota N, please try again later." at the quota.
std::optional<ApiError> RefusePoolOperation(const CloudState& state, const std::string& cluster_key,
                                            const std::string& pool_key, int quota);

// The refusal a new cluster-level operation gets: any running operation on
// the cluster excludes it ("Cluster is running incompatible operation O.").
std::optional<ApiError> RefuseClusterOperation(const CloudState& state,
                                               const std::string& cluster_key);

// Running GKE operations on one cluster ("P/L/C"), for the emulator's
// peak-concurrency counters.
int RunningOperationsOn(const CloudState& state, const std::string& cluster_key);

}  // namespace tpu::sim
