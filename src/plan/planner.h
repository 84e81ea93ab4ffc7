// The plan entry point: desired state (manifests) against live state (one
// refresh) → a Plan (model.h). Pure: no HTTP, no clock, no files.
//
// Per target: blocked targets (manifest errors) get no actions; suspended ones
// are listed only; the rest are diffed resource by resource (pool_diff.h,
// compute_diff.h), ordered, and passed through the guards (guards.h). Owned
// resources of targets whose directory vanished are planned for deletion (and
// so normally refused by the mass-delete guard).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cloud/types.h"

#include "manifest/types.h"
#include "plan/model.h"

namespace tpu::plan {

struct PlanOptions {
  bool allow_mass_delete = false;  // --allow-mass-delete
  // "project/cluster" keys to plan; empty = every target (and every vanished one).
  std::vector<std::string> only_targets;
  // The targets this replica owns (a shard of a sharded `watch`, docs/scaling.md);
  // null: all. Others, vanished ones too, are left to their owners.
  std::function<bool(const std::string& key)> owns;
  std::string tool_version;  // copied into Plan::tool_version
  std::string created_at;    // copied into Plan::created_at
  // Plan::live_fingerprints, which only a saved plan needs (`apply FILE`
  // checks them); the daemon never saves one and skips the cost.
  bool fingerprint_live = true;
  // A noop action's desired body, which only a plan written as JSON shows
  // (docs/plan-json.md): without it a plan that is only shown or applied holds
  // no second copy of the fleet beside the live state and the manifests.
  bool noop_bodies = true;
  // Slices `watch` moves back up their capacity ladder in this pass
  // (ladder.h): "project/cluster/slot" → the rung to move to. A slice whose
  // pool is on a worse rung gets a create-before-delete replace to it.
  std::map<std::string, int> ladder_moves;
};

// REQUIRES: `live` holds a refresh of every project the repo's targets name
// (projects missing from `live` are treated as having no clusters and no
// Compute resources).
Plan ComputePlan(const manifest::Repo& repo, const cloud::LiveState& live,
                 const PlanOptions& options);

// The projects a plan over `repo` needs refreshed (targets' projects, filtered
// by only_targets), sorted and unique.
std::vector<std::string> ProjectsToRefresh(const manifest::Repo& repo, const PlanOptions& options);

}  // namespace tpu::plan
