// The zonal managed instance groups GKE runs behind each node pool, served
// through the Compute API like any other instance group manager (get, list,
// aggregated list). As in GKE, a pool's `instanceGroupUrls` name them, one
// per node zone, and their `targetSize` is the pool's current node count per
// zone: `setSize` moves it, while the pool's `initialNodeCount` keeps its
// creation value. They come and go with their pool (and its cluster).
#pragma once

#include <string>

#include "sim/cloud_state.h"

namespace tpu::sim {

// Creates one group per URL in `pool.wire["instanceGroupUrls"]`, sized
// `pool.node_count`, not yet stable (instances are being created).
void CreatePoolInstanceGroups(CloudState& state, const PoolRecord& pool, int64_t now_ms);

// Sets every group of `pool` to `pool.node_count`; `stable` once the operation that changes them ended.
void SizePoolInstanceGroups(CloudState& state, const PoolRecord& pool, bool stable);

// Moves `pool` to the zones `locations` (UpdateNodePoolRequest.locations):
// one group per zone, each of the pool's node count per zone. The chips the
// pool holds stay counted in the zone it was created in.
void RelocatePoolInstanceGroups(CloudState& state, PoolRecord& pool, const json& locations,
                                int64_t now_ms);

// Removes the groups of `pool` (the pool is being removed).
void DeletePoolInstanceGroups(CloudState& state, const PoolRecord& pool);

}  // namespace tpu::sim
