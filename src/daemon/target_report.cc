// SummarizePlan, DeclaredChips, LiveChips, TargetStateName: see target_report.h
// and daemon_status.h.
#include "daemon/target_report.h"

#include "catalog/catalog.h"
#include "plan/ownership.h"

namespace tpu::daemon {
const char* TargetStateName(TargetState s) {
  switch (s) {
    case TargetState::kInSync: return "in-sync";
    case TargetState::kPending: return "pending";
    case TargetState::kBlocked: return "blocked";
    case TargetState::kRefused: return "refused";
    case TargetState::kSuspended: return "suspended";
    case TargetState::kFailed: return "failed";
    case TargetState::kWaitingForCapacity: return "waiting-for-capacity";
    case TargetState::kInterrupted: return "interrupted";
    case TargetState::kWaitingForWorkloads: return "waiting-for-workloads";
    case TargetState::kWaitingForWindow: return "waiting-for-window";
    case TargetState::kDrifted: return "drifted";
    case TargetState::kHeld: return "held";
  }
  return "unknown";
}

void SummarizePlan(const plan::TargetPlan& t, TargetReport* r) {
  r->last_plan = plan::Summary{};
  r->last_plan_actions.clear();
  for (const auto& a : t.actions) {
    if (a.changes_something()) ++r->last_plan_actions[plan::ActionKindName(a.kind)];
    switch (a.kind) {
      case plan::ActionKind::kCreate: ++r->last_plan.create; break;
      case plan::ActionKind::kUpdate:
      case plan::ActionKind::kResize: ++r->last_plan.update; break;
      case plan::ActionKind::kReplace: ++r->last_plan.replace; break;
      case plan::ActionKind::kDelete: ++r->last_plan.remove; break;
      case plan::ActionKind::kNoop: ++r->last_plan.noop; break;
    }
    r->last_plan.chips_created += a.blast.chips_created;
    r->last_plan.chips_destroyed += a.blast.chips_destroyed;
  }
}

int DeclaredChips(const manifest::Target& t) {
  int chips = 0;
  for (const auto& p : t.pools) chips += p.shape.chips * p.slices;
  for (const auto& g : t.groups)
    if (g.shape) chips += g.shape->chips;
  return chips;
}

int LiveChips(const cloud::LiveState& live, const std::string& key, const manifest::Target* declared) {
  const size_t slash = key.find('/');
  auto it = live.projects.find(key.substr(0, slash));
  if (it == live.projects.end() || slash == std::string::npos) return 0;
  const std::string cluster = key.substr(slash + 1);
  int chips = 0;
  for (const auto& c : it->second.clusters) {
    if (c.name != cluster) continue;
    for (const auto& p : c.node_pools)
      if (plan::PoolOwnership(p, key) == plan::Ownership::kOwned) chips += catalog::ChipsPerVm(p.machine_type) * p.node_count;
  }
  if (declared) {
    for (const auto& g : declared->groups)
      for (const auto& mig : it->second.instance_group_managers)
        if (mig.name == g.name && g.shape && g.shape->vms > 0)
          chips += g.shape->chips / g.shape->vms * mig.target_size;
  }
  return chips;
}

}  // namespace tpu::daemon
