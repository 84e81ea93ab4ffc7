// Capacity ladders (docs/capacity.md, "Fallback ladder"): a TPUNodePool whose
// spec.capacity lists several capacity types, best first. Each slice's pool is
// on one rung, read from the pool itself (its spot flag and reservation
// affinity), so nothing outside the cloud records where a slice stands; the
// rung is also written on the pool, as the resource label kRungLabel, for
// people and their tools.
//
// A slice the plan creates starts on the best rung that can hold it as far as
// the plan can tell (a reservation with too few free VMs cannot) and carries
// the rungs below as fallbacks that apply moves down on a stockout. A slice
// already running stays on its rung: only `watch` moves it back up
// (PlanOptions::ladder_moves), when the better rung has room and Kueue's
// admitted workloads allow.
#pragma once

#include <string>

#include "cloud/types.h"
#include "manifest/types.h"

namespace tpu::plan {

// Resource label on a laddered slice's pool: the index of its rung.
inline constexpr const char* kRungLabel = "tpu-provisioner-rung";

// The rung of spec.ladder whose capacity `live` runs on, or -1 when none is
// (the ladder was edited). REQUIRES: !spec.ladder.empty().
int RungOf(const manifest::Target& target, const manifest::TPUNodePool& spec, const cloud::NodePool& live);

// `desired` (a slice of `spec`) as rung `rung` of the ladder makes it: its
// capacity and kRungLabel set. REQUIRES: 0 <= rung < spec.ladder.size().
cloud::NodePool AtRung(const manifest::Target& target, const manifest::TPUNodePool& spec,
                       const cloud::NodePool& desired, int rung);

// The rung a pool's kRungLabel names; -1 when it has none.
int RungLabelOf(const cloud::NodePool& pool);
// What a pool's capacity fields say, as manifest::CapacityName spells it.
std::string PoolCapacityName(const cloud::NodePool& pool);

// "rung 1 (spot)".
std::string RungText(const manifest::TPUNodePool& spec, int rung);

}  // namespace tpu::plan
