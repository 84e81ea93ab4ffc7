// ComputePlan: one TargetPlanner (target_planner.h) per selected target, then
// targets whose directory vanished.
#include "plan/planner.h"

#include <algorithm>
#include <map>
#include <set>

#include "plan/capacity_shape.h"
#include "plan/fingerprint.h"
#include "plan/reservations.h"
#include "plan/target_planner.h"

namespace tpu::plan {
namespace {

bool Selected(const std::string& key, const PlanOptions& o) {
  if (o.owns && !o.owns(key)) return false;
  return o.only_targets.empty() ||
         std::find(o.only_targets.begin(), o.only_targets.end(), key) != o.only_targets.end();
}

const cloud::ProjectState* FindProject(const cloud::LiveState& live, const std::string& project) {
  auto it = live.projects.find(project);
  return it == live.projects.end() ? nullptr : &it->second;
}

// What every planned target gets last. A noop's body has served its diff:
// kept only for a plan written as JSON (PlanOptions::noop_bodies).
void FinishTarget(TargetPlan* t, const cloud::ProjectState* live, const PlanOptions& o) {
  AddCapacityShapes(t, live);
  if (!o.noop_bodies) {
    for (Action& a : t->actions) {
      if (a.kind != ActionKind::kNoop) continue;
      a.node_pool.reset();
      a.workload_policy.reset();
      a.instance_template.reset();
      a.instance_group_manager.reset();
    }
  }
  t->actions.shrink_to_fit();  // a fleet's worth of targets: no spare room in each
}

}  // namespace

std::vector<std::string> ProjectsToRefresh(const manifest::Repo& repo, const PlanOptions& options) {
  std::set<std::string> projects;
  for (const auto& t : repo.targets)
    if (Selected(t.Key(), options)) projects.insert(t.project);
  for (const auto& key : options.only_targets) {
    if (options.owns && !options.owns(key)) continue;
    // A selected target may have vanished from the repo; its project still needs a look.
    size_t slash = key.find('/');
    if (slash != std::string::npos) projects.insert(key.substr(0, slash));
  }
  return {projects.begin(), projects.end()};
}

Plan ComputePlan(const manifest::Repo& repo, const cloud::LiveState& live, const PlanOptions& options) {
  Plan plan;
  plan.tool_version = options.tool_version;
  plan.created_at = options.created_at;
  for (const auto& e : repo.errors) plan.errors.push_back(e.ToString());

  // Each project's Compute objects indexed once, for all of its targets.
  std::map<std::string, LiveCompute> computes;
  auto compute = [&](const std::string& project) -> const LiveCompute& {
    auto it = computes.find(project);
    if (it == computes.end()) it = computes.emplace(project, IndexCompute(FindProject(live, project))).first;
    return it->second;
  };
  std::set<std::string> declared;
  for (const auto& t : repo.targets) {
    declared.insert(t.Key());
    if (!Selected(t.Key(), options)) continue;
    TargetPlanner planner(t.project, t.cluster, FindProject(live, t.project), compute(t.project), options);
    plan.targets.push_back(planner.Plan(t));
    if (plan.targets.back().executable()) CheckReservations(plan.targets.back(), live, &t);
    FinishTarget(&plan.targets.back(), FindProject(live, t.project), options);
  }

  // Targets whose directory vanished: owned node pools in a cluster no
  // directory names, and owned Compute objects whose marker names such a target.
  std::set<std::string> vanished;
  for (const auto& [project, state] : live.projects) {
    for (const auto& c : state.clusters) {
      std::string key = project + "/" + c.name;
      if (declared.count(key)) continue;
      for (const auto& p : c.node_pools)
        if (PoolOwnership(p, key) == Ownership::kOwned) vanished.insert(key);
    }
    auto check = [&](const std::string& description) {
      auto m = ParseComputeDescription(description);
      if (m && !declared.count(m->target) && m->target.rfind(project + "/", 0) == 0)
        vanished.insert(m->target);
    };
    for (const auto& p : state.workload_policies) check(p.description);
    for (const auto& t : state.instance_templates) check(t.description);
    for (const auto& g : state.instance_group_managers) check(g.description);
  }
  for (const auto& key : vanished) {
    if (!Selected(key, options)) continue;
    size_t slash = key.find('/');
    std::string project = key.substr(0, slash);
    TargetPlanner planner(project, key.substr(slash + 1), FindProject(live, project), compute(project), options);
    plan.targets.push_back(planner.PlanVanished());
    FinishTarget(&plan.targets.back(), FindProject(live, project), options);
  }
  std::sort(plan.targets.begin(), plan.targets.end(),
            [](const TargetPlan& a, const TargetPlan& b) { return a.key < b.key; });
  // Only the projects this plan acts on: `apply FILE` checks these, and a
  // daemon planning one target must not re-serialise the whole fleet.
  for (const auto& t : plan.targets)
    if (options.fingerprint_live && !plan.live_fingerprints.count(t.project))
      if (const cloud::ProjectState* ps = FindProject(live, t.project))
        plan.live_fingerprints[t.project] = Fingerprint(*ps);
  return plan;
}

}  // namespace tpu::plan
