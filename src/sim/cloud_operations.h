// Long-running operations of both APIs. An operation is PENDING for the first
// fifth of its latency, RUNNING until it ends, then DONE, when its effect on
// the state is applied. Time is read from the wall clock on every request
// (AdvanceOperations), with no thread of its own, so operations in a state
// file resume after a restart and finish when their time has come.
#pragma once

#include <string>

#include "sim/cloud_context.h"

namespace tpu::sim {

// "operation-<ms>-<8 hex>", the shape both APIs use.
std::string NewOperationName(SimContext& ctx);
// RFC 3339 UTC with milliseconds: "2026-11-22T03:54:02.123Z".
std::string Rfc3339(int64_t ms);
std::string NextComputeId(SimContext& ctx);

struct GkeOpSpec {
  std::string project, location, cluster_key;
  std::string type;         // CREATE_NODE_POOL, …
  std::string target_link;  // selfLink of the cluster or node pool
  OpEffect effect = OpEffect::kNone;
  std::string target_key;
  json error;               // known failure (e.g. stockout), reported when DONE
};
OpRecord& StartGkeOperation(SimContext& ctx, const GkeOpSpec& spec);

struct ComputeOpSpec {
  std::string project;
  std::string scope;        // "zones/Z", "regions/R" or "global"
  std::string type;         // insert, delete, compute.instanceGroupManagers.resize
  std::string target_link, target_id;
  OpEffect effect = OpEffect::kNone;
  std::string target_key;
};
OpRecord& StartComputeOperation(SimContext& ctx, const ComputeOpSpec& spec);

// Moves every operation to the status its age calls for and applies the
// effects of those that end, oldest first. Returns whether anything changed.
bool AdvanceOperations(CloudState& state, int64_t now_ms);

// A pool's chips go back to the capacity model (delete, reclaim, failure).
void ReleasePoolChips(CloudState& state, PoolRecord& pool);
// Takes `chips` for `pool` from the capacity model. On a stockout, returns the
// error its create operation ends with ({code 8, message: what + why}) and
// takes nothing; else null.
json AcquirePoolChips(CloudState& state, PoolRecord& pool, int64_t chips, const std::string& what);
// The Compute provisioning model a pool's nodes run under, as the capacity
// model keys its zone pools: "SPOT" for config.spot, else "STANDARD".
std::string ProvisioningModelOf(const PoolRecord& pool);

}  // namespace tpu::sim
