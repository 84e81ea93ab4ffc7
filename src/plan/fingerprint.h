// A fingerprint of one project's live state, recorded in a plan so that
// `apply FILE` can refuse to execute a saved plan when live state moved since.
//
// Covers what the diff reads: every node pool of every cluster (fields, status,
// size — except the size of autoscaled pools, which moves on its own), and the
// Compute workload policies, instance templates and MIGs. Running operations
// and status messages are left out. Stable across list order.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "cloud/types.h"
#include "plan/model.h"

namespace tpu::plan {

// 16 lowercase hex digits.
std::string Fingerprint(const cloud::ProjectState& project);

// OK when every project in plan.live_fingerprints has the same fingerprint in
// `live` (a project absent from `live` fingerprints as empty). Otherwise
// FailedPrecondition naming the projects that moved.
Status CheckLiveUnchanged(const Plan& plan, const cloud::LiveState& live);

// FNV-1a 64-bit as 16 hex digits; the hash behind fingerprints, target hashes
// and template name suffixes.
std::string Fnv1aHex(std::string_view data);

}  // namespace tpu::plan
