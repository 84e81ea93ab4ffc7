// TargetPlanner (target_planner.h): node pools against their slots (adopt,
// update, replace, repair, superseded replacements), MIGs, and what no
// manifest declares any more.
#include "plan/target_planner.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "catalog/catalog.h"
#include "plan/capacity_shape.h"
#include "plan/compute_diff.h"
#include "plan/field_text.h"
#include "plan/fingerprint.h"
#include "plan/guards.h"
#include "plan/ladder.h"
#include "plan/normalize.h"
#include "plan/pool_slot.h"

namespace tpu::plan {

std::vector<const cloud::NodePool*> TargetPlanner::SlotCandidates(const std::string& slot) const {
  std::vector<const cloud::NodePool*> out;
  if (!cluster_) return out;
  for (const auto& p : cluster_->node_pools)
    if (p.name == slot) out.push_back(&p);
  std::vector<const cloud::NodePool*> labelled;
  for (size_t i = 0; i < owned_.size(); ++i)
    if (owned_[i]->name != slot && owned_slots_[i] == slot) labelled.push_back(owned_[i]);
  std::sort(labelled.begin(), labelled.end(),
            [](const auto* a, const auto* b) { return a->name < b->name; });
  out.insert(out.end(), labelled.begin(), labelled.end());
  return out;
}

DesiredPool TargetPlanner::AtLiveRung(const DesiredPool& dp, const std::vector<const cloud::NodePool*>& candidates,
                                      bool* move) {
  const manifest::TPUNodePool& spec = *dp.spec;
  DesiredPool out = dp;
  SliceRung line{dp.pool.name, 0, static_cast<int>(spec.ladder.size()), "", ""};
  // After an interrupted move back up, the slot has two pools: the better
  // rung's is kept, the other deleted as superseded.
  int live = -1;
  for (const auto* c : candidates)
    if (int r = RungOf(*target_, spec, *c); r >= 0 && (live < 0 || r < live)) live = r;
  line.rung = live;
  int want = live < 0 ? 0 : live;
  auto asked = o_.ladder_moves.find(tp_.key + "/" + dp.pool.name);
  if (asked != o_.ladder_moves.end() && live > asked->second && asked->second >= 0) {
    want = asked->second;
    *move = true;
    line.why = "moving back up to " + RungText(spec, want) + ": it has room";
  } else if (live < 0) {
    line.why = "its pool runs on none of the ladder's capacity types: replaced onto " + RungText(spec, 0);
  } else if (live == 0) {
    line.why = "on its best rung";
  } else {
    line.why = "a better rung had no room or stocked out when it was created; watch moves it back when one has room";
  }
  line.capacity = live < 0 ? "" : manifest::CapacityName(spec.ladder[static_cast<size_t>(live)]);
  tp_.ladder.push_back(std::move(line));
  out.pool = AtRung(*target_, spec, dp.pool, want);
  return out;
}

void TargetPlanner::PlanSliceCreate(const DesiredPool& dp, const std::string& source,
                                    const std::vector<std::string>& deps) {
  const manifest::TPUNodePool& spec = *dp.spec;
  Action a = NewAction(ActionKind::kCreate, PoolRef(dp.pool.name), source,
                       "slice " + std::to_string(dp.slice) + " declared, not found");
  a.node_pool = dp.pool;
  if (!spec.ladder.empty()) {
    a.node_pool = AtRung(*target_, spec, dp.pool, 0);
    for (size_t k = 1; k < spec.ladder.size(); ++k)
      a.fallbacks.push_back(AtRung(*target_, spec, dp.pool, static_cast<int>(k)));
    // The reservation check (reservations.h) may still move it down a rung.
    tp_.ladder.push_back({dp.pool.name, 0, static_cast<int>(spec.ladder.size()),
                          manifest::CapacityName(spec.ladder.front()), "created on its best rung"});
  }
  a.blast = {dp.chips, 0, dp.hosts, 0, dp.multi_host, dp.autoscaled};
  a.depends_on = deps;
  Add(std::move(a));
}

void TargetPlanner::PlanPools() {
  for (const auto& declared : desired_.pools) {
    const manifest::TPUNodePool& spec = *declared.spec;
    const std::string source = SourceOf(spec.where, "TPUNodePool", spec.name);
    const std::string& slot = declared.pool.name;
    claimed_pools_.insert(slot);
    std::vector<std::string> deps;
    if (spec.shape.placement == catalog::Placement::kWorkloadPolicy)
      deps.push_back(ResourceRef{ResourceKind::kWorkloadPolicy, tp_.project,
                                 RegionOfZone(spec.location), "", WorkloadPolicyName(spec)}
                         .Id());
    std::vector<const cloud::NodePool*> candidates = SlotCandidates(slot);
    if (candidates.empty()) {
      PlanSliceCreate(declared, source, deps);
      continue;
    }
    bool ladder_move = false;
    std::optional<DesiredPool> laddered;
    const DesiredPool& dp =
        spec.ladder.empty() ? declared : laddered.emplace(AtLiveRung(declared, candidates, &ladder_move));
    struct Fit {
      const cloud::NodePool* live;
      Ownership own;
      PoolDiff diff;
      bool broken;
    };
    std::vector<Fit> fits;
    bool conflict = false;
    for (const auto* lp : candidates) {
      claimed_pools_.insert(lp->name);
      Ownership own = PoolOwnership(*lp, tp_.key);
      if (own != Ownership::kOwned && !spec.annotations.adopt) {
        Conflict("node pool " + lp->name + " in cluster " + tp_.cluster, source);
        conflict = true;
        break;
      }
      PoolDiffOptions opts{dp.multi_host, spec.node_config.resource_labels.has_value(), tp_.project};
      std::optional<cloud::NodePool> renamed;  // only for a pool not named for its slot
      const cloud::NodePool& want = lp->name == dp.pool.name ? dp.pool : renamed.emplace(AsPoolNamed(dp.pool, lp->name));
      PoolDiff d = DiffNodePool(want, *lp, opts);
      fits.push_back({lp, own, std::move(d), own == Ownership::kOwned && Broken(lp->status)});
    }
    if (conflict) continue;
    auto keeper = std::find_if(fits.begin(), fits.end(), [](const Fit& f) {
      return !f.broken && f.diff.kind != ActionKind::kReplace;
    });
    const bool replace = keeper == fits.end();
    if (replace) {
      keeper = std::find_if(fits.begin(), fits.end(), [](const Fit& f) { return !f.broken; });
      if (keeper == fits.end()) keeper = fits.begin();
    }
    for (auto f = fits.begin(); f != fits.end(); ++f) {
      if (f == keeper) continue;
      PlanSuperseded(*f->live, keeper->live->name, replace);
    }
    PlanSlotPool(dp, *keeper->live, keeper->own, keeper->broken, std::move(keeper->diff), source, deps,
                 ladder_move);
  }
}

void TargetPlanner::PlanSuperseded(const cloud::NodePool& lp, const std::string& keeper, bool keeper_replaced) {
  Action a = NewAction(ActionKind::kDelete, PoolRef(lp.name), "",
                       "slot " + SlotOf(lp) + " is filled by " + keeper +
                           (keeper_replaced ? " (being replaced)" : "") +
                           ": left by an interrupted create-before-delete replace");
  a.node_pool = lp;
  bool multi = lp.placement_policy && (!lp.placement_policy->type.empty() ||
                                       !lp.placement_policy->policy_name.empty());
  a.blast = {0, PoolChips(lp.machine_type, lp.node_count), 0, lp.node_count, multi, false};
  // Only a kept pool truly supersedes: a slot whose pools are all being
  // replaced loses this capacity like any delete.
  if (!keeper_replaced) a.superseded_by = keeper;
  Add(std::move(a));
}

void TargetPlanner::PlanSlotPool(const DesiredPool& dp, const cloud::NodePool& lp, Ownership own, bool broken,
                                 PoolDiff d, const std::string& source, const std::vector<std::string>& deps,
                                 bool ladder_move) {
  std::string reason = d.kind == ActionKind::kNoop ? "in sync"
                       : d.kind == ActionKind::kReplace ? d.replace_reason
                                                        : "updatable fields changed";
  if (own != Ownership::kOwned) reason = "adopt: " + reason + (own == Ownership::kForeign
                                              ? " (marked for another target)" : " (unmanaged pool)");
  if (broken) {
    d.kind = ActionKind::kReplace;
    reason = "node pool is " + lp.status +
             (lp.status_message.empty() ? "" : " (" + lp.status_message + ")") + ": replaced to repair";
  }
  const bool adopt_only = own != Ownership::kOwned && !broken && d.kind == ActionKind::kUpdate &&
                          OnlyOwnershipLabels(d.changes);
  if (adopt_only) reason = "adopt: matches its manifest (unmanaged pool); only the ownership labels are written";
  Action a = NewAction(d.kind, PoolRef(lp.name), source, reason);
  a.adopt_only = adopt_only;
  a.changes = std::move(d.changes);
  if (d.kind == ActionKind::kUpdate || d.kind == ActionKind::kResize) a.update_calls = d.update_calls;
  a.node_pool = std::move(d.body);
  int live_chips = PoolChips(lp.machine_type, lp.node_count);
  if (d.kind == ActionKind::kReplace) {
    // The replacement: under the slot's name when the old pool goes first;
    // beside it, under a temporary name, when it must exist first.
    const std::string& slot = dp.pool.name;
    std::string name = slot;
    if (ladder_move) {
      a.ladder_move = true;
      a.reason = "capacity ladder: moving back up to " + RungText(*dp.spec, RungOf(*target_, *dp.spec, dp.pool)) +
                 " from " + RungText(*dp.spec, RungOf(*target_, *dp.spec, lp));
      name = ReplacementPoolName(dp.pool);
      if (name == lp.name) name = slot;
      a.reason += "; " + name + " is created before " + lp.name + " is deleted";
    } else if (tp_.replace_strategy == manifest::ReplaceStrategy::kCreateBeforeDelete) {
      name = ReplacementPoolName(dp.pool);
      if (name == lp.name) name = slot;  // repairing a broken replacement of the same spec
      a.reason += "; the replacement " + name + " is created before " + lp.name + " is deleted";
    } else if (lp.name != slot) {
      a.reason += "; the replacement takes the slot's name " + slot;
    }
    a.node_pool = AsPoolNamed(dp.pool, name);
    // A replace in place (the old pool goes first) may move down the ladder
    // like a create; a move back up is one probe of one better rung.
    if (!ladder_move && name == slot && !dp.spec->ladder.empty()) {
      const int at = std::max(0, RungOf(*target_, *dp.spec, dp.pool));
      for (size_t k = static_cast<size_t>(at) + 1; k < dp.spec->ladder.size(); ++k)
        a.fallbacks.push_back(AsPoolNamed(AtRung(*target_, *dp.spec, dp.pool, static_cast<int>(k)), name));
    }
    a.blast = {dp.chips, live_chips, dp.hosts, lp.node_count, dp.multi_host, dp.autoscaled};
    a.depends_on = deps;
  } else if (d.kind == ActionKind::kResize || d.kind == ActionKind::kUpdate) {
    int delta = a.node_pool->node_count - lp.node_count;
    bool sized = std::find(a.update_calls.begin(), a.update_calls.end(), UpdateCall::kSetSize) !=
                 a.update_calls.end();
    if (sized) {
      int per_vm = catalog::ChipsPerVm(lp.machine_type);
      if (delta > 0) a.blast = {delta * per_vm, 0, delta, 0, false, false};
      else a.blast = {0, -delta * per_vm, 0, -delta, false, false};
    }
  }
  Add(std::move(a));
}

void TargetPlanner::PlanGroups() {
  for (const auto& dg : desired_.groups) {
    const auto& want = dg.resource;
    std::string id = want.zone + "/" + want.name;
    wanted_groups_.insert(id);
    std::vector<std::string> deps;
    std::string tmpl = LastSegment(want.instance_template);
    if (wanted_templates_.count(tmpl)) deps.push_back(TemplateRef(tmpl).Id());
    if (!want.workload_policy.empty()) deps.push_back(PolicyDep(want.workload_policy));
    auto it = lc_.groups.find(id);
    if (it == lc_.groups.end()) {
      Action a = NewAction(ActionKind::kCreate, GroupRef(want), dg.source, "declared, not found");
      a.instance_group_manager = want;
      a.blast = {dg.chips, 0, dg.hosts, 0, dg.multi_host, false};
      a.depends_on = deps;
      Add(std::move(a));
      continue;
    }
    const cloud::InstanceGroupManager& live = *it->second;
    bool owned = OwnedBy(live.description, tp_.key);
    if (!owned && !dg.annotations.adopt) {
      Conflict("managed instance group " + want.name + " in " + want.zone, dg.source);
      continue;
    }
    ComputeDiff d = DiffInstanceGroupManager(want, live);
    Action a = NewAction(d.kind, GroupRef(want), dg.source,
                         d.kind == ActionKind::kNoop      ? "in sync"
                         : d.kind == ActionKind::kReplace ? "BULK slice changed: replaced as a whole"
                                                          : "updatable fields changed");
    if (!owned) a.reason = "adopt: " + a.reason;
    a.changes = std::move(d.changes);
    a.update_calls = std::move(d.update_calls);
    a.instance_group_manager = want;
    int live_chips = GroupChips(live, lc_);
    if (d.kind == ActionKind::kReplace) {
      a.blast = {dg.chips, live_chips, dg.hosts, live.target_size, dg.multi_host, false};
    } else if (d.kind != ActionKind::kNoop && want.target_size != live.target_size) {
      int per_vm = dg.hosts ? dg.chips / dg.hosts : 0;
      int delta = want.target_size - live.target_size;
      if (delta > 0) a.blast = {delta * per_vm, 0, delta, 0, false, false};
      else a.blast = {0, -delta * per_vm, 0, -delta, false, false};
    }
    if (d.kind != ActionKind::kNoop) a.depends_on = deps;
    Add(std::move(a));
  }
}

void TargetPlanner::PlanUndeclared() {
  std::vector<const cloud::NodePool*> gone;
  for (const auto* p : OwnedPools())
    if (!claimed_pools_.count(p->name)) gone.push_back(p);
  std::sort(gone.begin(), gone.end(), [](const auto* a, const auto* b) {
    auto sa = SliceOf(SlotOf(*a)), sb = SliceOf(SlotOf(*b));
    if (sa.first != sb.first) return sa.first < sb.first;
    return sa.second > sb.second;
  });
  const std::string why = tp_.vanished ? "target directory removed" : "no longer declared";
  for (const auto* p : gone) {
    if (HasResourceLabel(*p, kDeletionPolicyLabel, "abandon")) {
      Action a = NewAction(ActionKind::kUpdate, PoolRef(p->name), "",
                           why + "; deletion-policy: abandon: released from management, not deleted");
      cloud::NodePool body = *p;
      for (const char* k : {cloud::kManagedLabel, cloud::kTargetHashLabel, kPreventDestroyLabel,
                            kDeletionPolicyLabel, kSlotLabel}) {
        auto it = body.resource_labels->find(k);
        if (it == body.resource_labels->end()) continue;
        a.changes.push_back({std::string("config.resourceLabels[\"") + k + "\"]", "\"" + it->second + "\"",
                             kUnset, false});
        body.resource_labels->erase(it);
      }
      a.node_pool = std::move(body);
      a.update_calls = {UpdateCall::kUpdateNodePool};
      Add(std::move(a));
      continue;
    }
    if (!UndeclaredDeleteAllowed("node pool " + p->name)) continue;
    Action a = NewAction(ActionKind::kDelete, PoolRef(p->name), "", why);
    a.node_pool = *p;
    bool multi = p->placement_policy && (!p->placement_policy->type.empty() ||
                                         !p->placement_policy->policy_name.empty());
    a.blast = {0, PoolChips(p->machine_type, p->node_count), 0, p->node_count, multi, false};
    Add(std::move(a));
  }
  for (const auto& [id, g] : lc_.groups) {
    if (!OwnedBy(g->description, tp_.key) || wanted_groups_.count(id)) continue;
    if (!UndeclaredDeleteAllowed("managed instance group " + g->name)) continue;
    Action a = NewAction(ActionKind::kDelete, GroupRef(*g), "", why);
    a.instance_group_manager = *g;
    a.blast = {0, GroupChips(*g, lc_), 0, g->target_size, g->target_size > 1, false};
    Add(std::move(a));
  }
  for (const auto& [name, t] : lc_.templates) {
    if (!OwnedBy(t->description, tp_.key) || wanted_templates_.count(name)) continue;
    if (!UndeclaredDeleteAllowed("instance template " + name)) continue;
    Action a = NewAction(ActionKind::kDelete, TemplateRef(name), "",
                         tp_.vanished ? why : "no longer used (templates are immutable)");
    a.instance_template = *t;
    Add(std::move(a));
  }
  for (const auto& [id, p] : lc_.policies) {
    if (!OwnedBy(p->description, tp_.key) || wanted_policies_.count(id)) continue;
    if (!UndeclaredDeleteAllowed("workload policy " + p->name)) continue;
    Action a = NewAction(ActionKind::kDelete, PolicyRef(*p), "", why);
    a.workload_policy = *p;
    Add(std::move(a));
  }
}

bool TargetPlanner::UndeclaredDeleteAllowed(const std::string& what) {
  if (prune_) return true;
  tp_.warnings.push_back("prune: false: kept " + what + ", which no manifest declares");
  return false;
}

}  // namespace tpu::plan
