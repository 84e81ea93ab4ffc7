// A plan at fleet size for the rendering tests: 2,000 actions over five
// clusters, computed by the real planner from manifests and live state.
#pragma once

#include <string>

#include "plan/planner.h"
#include "plan/plan_test_util.h"

namespace tpu::plan::testing {

inline constexpr int kFleetClusters = 5;

inline manifest::TPUNodePool WithCapacity(manifest::TPUNodePool p, manifest::CapacityType type) {
  p.capacity.type = type;
  return p;
}

// Per cluster: 150 v6e spot slices and 100 v5p slices to create, 50 v5e pools
// that go from on-demand to spot (a replace each), 100 v5e pools no longer
// declared (deletes): 400 actions, 2,000 in all.
inline Plan FleetPlan() {
  manifest::Repo repo;
  cloud::LiveState live;
  cloud::ProjectState& ps = live.projects["ml-prod"];
  ps.project = "ml-prod";
  for (int c = 0; c < kFleetClusters; ++c) {
    std::string cluster = "train-" + std::to_string(c);
    manifest::Target before = MakeTarget("ml-prod", cluster);
    before.pools = {MakePool("serve", "v5e", "2x2", 50), MakePool("old", "v5e", "2x4", 100)};
    cloud::LiveState was = InSync(before);
    ps.clusters.push_back(was.projects["ml-prod"].clusters.front());

    manifest::Target now = MakeTarget("ml-prod", cluster);
    now.pools = {WithCapacity(MakePool("v6e-spot", "v6e", "4x4", 150), manifest::CapacityType::kSpot),
                 MakePool("v5p", "v5p", "2x2x4", 100),
                 WithCapacity(MakePool("serve", "v5e", "2x2", 50), manifest::CapacityType::kSpot)};
    repo.targets.push_back(now);
  }
  PlanOptions o;
  o.allow_mass_delete = true;
  o.fingerprint_live = false;
  return ComputePlan(repo, live, o);
}

}  // namespace tpu::plan::testing
