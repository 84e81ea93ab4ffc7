// What GKE does with a NodePool it is asked to create (alone, or inside a
// cluster create): fill in the server-side defaults, then check the rules the
// real API enforces on the body (docs/emulator.md lists each with its public
// source): TPU machine type against topology; a multi-host slice's node count
// (fixed at its VM count, or autoscaled as a whole between 0 and it);
// autoscaling bounds; flex-start's requirements; a release channel's refusal
// of `management.autoUpgrade: false`. Nothing here touches the state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "sim/cloud_context.h"
#include "sim/cloud_errors.h"

namespace tpu::sim {

struct PoolPath {
  std::string project, location, cluster, pool, verb;
  std::string cluster_key() const { return project + "/" + location + "/" + cluster; }
  std::string pool_key() const { return cluster_key() + "/" + pool; }
  std::string resource() const {
    return "projects/" + project + "/locations/" + location + "/clusters/" + cluster +
           "/nodePools/" + pool;
  }
  std::string self_link() const { return "https://container.googleapis.com/v1/" + resource(); }
};

// A pool ready to be stored: its wire form with defaults, and the chips its
// initial nodes take from the capacity model (acquired by the caller).
struct PreparedPool {
  PoolRecord record;
  int64_t chips = 0;
};

// `np` is the request's NodePool; `cluster` the cluster's wire form.
// REQUIRES: p.pool is np's name.
std::variant<PreparedPool, ApiError> PreparePool(SimContext& ctx, const PoolPath& p, json np,
                                                 const json& cluster);

// The cluster's release channel ("REGULAR", …), or "" when it has none.
std::string ReleaseChannelOf(const json& cluster);

// setManagement: a release channel refuses autoUpgrade false; flex-start
// pools keep auto-repair off.
std::optional<ApiError> CheckManagement(const json& cluster, const PoolRecord& pool,
                                        const json& management);

// setAutoscaling: the bounds, and a multi-host slice's 0 ↔ VM count.
std::optional<ApiError> CheckAutoscaling(const PoolRecord& pool, const json& autoscaling);

// The VMs of a multi-host TPU slice pool, or 0 for any other pool.
int MultiHostVms(const PoolRecord& pool);

}  // namespace tpu::sim
