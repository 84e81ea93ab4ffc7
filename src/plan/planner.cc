// ComputePlan: per target, desired against live; ownership, ordering,
// dependencies and guards; then targets whose directory vanished.
#include "plan/planner.h"

#include <algorithm>
#include <map>
#include <set>

#include "catalog/catalog.h"
#include "plan/capacity_shape.h"
#include "plan/compute_diff.h"
#include "plan/desired.h"
#include "plan/field_text.h"
#include "plan/fingerprint.h"
#include "plan/guards.h"
#include "plan/normalize.h"
#include "plan/ownership.h"
#include "plan/pool_diff.h"
#include "plan/pool_slot.h"

namespace tpu::plan {
namespace {

bool Selected(const std::string& key, const PlanOptions& o) {
  return o.only_targets.empty() ||
         std::find(o.only_targets.begin(), o.only_targets.end(), key) != o.only_targets.end();
}

bool Broken(const std::string& status) { return status == "ERROR" || status == "RUNNING_WITH_ERROR"; }

// "train-12" → {"train", 12}; names without a numeric suffix sort with index -1.
std::pair<std::string, int> SliceOf(const std::string& name) {
  size_t dash = name.rfind('-');
  if (dash == std::string::npos || dash + 1 == name.size()) return {name, -1};
  int idx = 0;
  for (size_t i = dash + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return {name, -1};
    idx = idx * 10 + (name[i] - '0');
  }
  return {name.substr(0, dash), idx};
}

// Live Compute objects of a project, by identity.
struct LiveCompute {
  std::map<std::string, const cloud::WorkloadPolicy*> policies;           // region/name
  std::map<std::string, const cloud::InstanceTemplate*> templates;        // name
  std::map<std::string, const cloud::InstanceGroupManager*> groups;       // zone/name
};

LiveCompute IndexCompute(const cloud::ProjectState* ps) {
  LiveCompute lc;
  if (!ps) return lc;
  for (const auto& p : ps->workload_policies) lc.policies[p.region + "/" + p.name] = &p;
  for (const auto& t : ps->instance_templates) lc.templates[t.name] = &t;
  for (const auto& g : ps->instance_group_managers) lc.groups[g.zone + "/" + g.name] = &g;
  return lc;
}

bool OwnedBy(const std::string& description, const std::string& key) {
  auto m = ParseComputeDescription(description);
  return m && m->target == key;
}

// Whether a node pool diff only writes tpu-provisioner's ownership labels:
// what adopting a pool that already matches its manifest changes.
bool OnlyOwnershipLabels(const std::vector<FieldChange>& changes) {
  if (changes.empty()) return false;
  for (const auto& c : changes)
    if (c.path != std::string("config.resourceLabels[\"") + cloud::kManagedLabel + "\"]" &&
        c.path != std::string("config.resourceLabels[\"") + cloud::kTargetHashLabel + "\"]")
      return false;
  return true;
}

// Chips of a live MIG: target size × chips per VM of its template's machine type.
int GroupChips(const cloud::InstanceGroupManager& g, const LiveCompute& lc) {
  auto it = lc.templates.find(LastSegment(g.instance_template));
  if (it == lc.templates.end()) return 0;
  return PoolChips(LastSegment(it->second->machine_type), g.target_size);
}

class TargetPlanner {
 public:
  TargetPlanner(const std::string& project, const std::string& cluster, const cloud::ProjectState* ps,
                const PlanOptions& o)
      : ps_(ps), o_(o), lc_(IndexCompute(ps)) {
    tp_.project = project;
    tp_.cluster = cluster;
    tp_.key = project + "/" + cluster;
  }

  TargetPlan Plan(const manifest::Target& t) {
    tp_.replace_strategy = t.policy.replace_strategy;
    tp_.max_delete_percent = t.policy.max_delete_percent;
    prune_ = t.policy.prune;
    if (t.blocked()) {
      tp_.status = TargetStatus::kBlocked;
      for (const auto& e : t.errors) tp_.errors.push_back(e.ToString());
      return std::move(tp_);
    }
    if (t.policy.suspend) {
      tp_.status = TargetStatus::kSuspended;
      if (t.policy.location) tp_.location = *t.policy.location;
      tp_.warnings.push_back("Cluster spec.suspend is true: nothing planned");
      return std::move(tp_);
    }
    ResolveCluster(t.policy.location, !t.pools.empty());
    if (!tp_.errors.empty()) return Blocked();
    CheckReleaseChannel(t);
    if (!tp_.errors.empty()) return Blocked();
    desired_ = BuildDesired(t);
    CountOwned();
    ListWorkloadPools();
    PlanPolicies();
    PlanTemplates();
    PlanPools();
    PlanGroups();
    PlanUndeclared();
    if (!tp_.errors.empty()) return Blocked();
    Finish();
    return std::move(tp_);
  }

  // A target whose directory is gone: everything it owns is deleted.
  TargetPlan PlanVanished() {
    tp_.vanished = true;
    ResolveCluster(std::nullopt, false);
    CountOwned();
    ListWorkloadPools();
    PlanUndeclared();
    Finish();
    return std::move(tp_);
  }

 private:
  TargetPlan Blocked() {
    tp_.status = TargetStatus::kBlocked;
    tp_.actions.clear();
    return std::move(tp_);
  }

  void ResolveCluster(const std::optional<std::string>& location, bool required) {
    std::vector<const cloud::Cluster*> found;
    if (ps_)
      for (const auto& c : ps_->clusters)
        if (c.name == tp_.cluster && (!location || c.location == *location)) found.push_back(&c);
    if (found.size() == 1) {
      cluster_ = found[0];
      tp_.location = cluster_->location;
      return;
    }
    if (location) tp_.location = *location;
    if (found.size() > 1) {
      std::string where;
      for (const auto* c : found) where += (where.empty() ? "" : ", ") + c->location;
      tp_.errors.push_back("cluster " + tp_.cluster + " exists in several locations of project " +
                           tp_.project + " (" + where +
                           "); set spec.location in cluster.yaml to choose one");
    } else if (required) {
      tp_.errors.push_back("cluster " + tp_.cluster + " not found in project " + tp_.project +
                           (location ? " at location " + *location : std::string()) +
                           "; node pools need an existing GKE cluster");
    }
  }

  std::vector<const cloud::NodePool*> OwnedPools() const {
    std::vector<const cloud::NodePool*> out;
    if (!cluster_) return out;
    for (const auto& p : cluster_->node_pools)
      if (PoolOwnership(p, tp_.key) == Ownership::kOwned) out.push_back(&p);
    return out;
  }

  void ListWorkloadPools() {
    if (!cluster_) return;
    for (const auto& p : cluster_->node_pools) {
      if (!HasResourceLabel(p, kWorkloadOwnerLabel, kWorkloadOwner)) continue;
      const auto& l = *p.resource_labels;
      auto get = [&](const char* k) {
        auto it = l.find(k);
        return it == l.end() ? std::string() : it->second;
      };
      tp_.workload_pools.push_back({p.name, get(kWorkloadNamespaceLabel) + "/" + get(kWorkloadJobSetLabel),
                                    p.status, PoolChips(p.machine_type, p.node_count)});
    }
    std::sort(tp_.workload_pools.begin(), tp_.workload_pools.end(),
              [](const WorkloadOwnedPool& a, const WorkloadOwnedPool& b) { return a.name < b.name; });
  }

  void CountOwned() {
    for (const auto* p : OwnedPools()) tp_.owned_chips += PoolChips(p->machine_type, p->node_count);
    for (const auto& [id, g] : lc_.groups)
      if (OwnedBy(g->description, tp_.key)) tp_.owned_chips += GroupChips(*g, lc_);
  }

  Action NewAction(ActionKind kind, ResourceRef ref, std::string source, std::string reason) {
    Action a;
    a.kind = kind;
    a.resource = std::move(ref);
    a.target = tp_.key;
    a.source = std::move(source);
    a.reason = std::move(reason);
    return a;
  }

  ResourceRef PoolRef(const std::string& name) const {
    return {ResourceKind::kNodePool, tp_.project, tp_.location, tp_.cluster, name};
  }
  ResourceRef PolicyRef(const cloud::WorkloadPolicy& p) const {
    return {ResourceKind::kWorkloadPolicy, tp_.project, p.region, "", p.name};
  }
  ResourceRef TemplateRef(const std::string& name) const {
    return {ResourceKind::kInstanceTemplate, tp_.project, "", "", name};
  }
  ResourceRef GroupRef(const cloud::InstanceGroupManager& g) const {
    return {ResourceKind::kInstanceGroupManager, tp_.project, g.zone, "", g.name};
  }

  void Conflict(const std::string& what, const std::string& source) {
    tp_.errors.push_back(source + ": " + what +
                         " already exists and is not managed by tpu-provisioner for this target; "
                         "add the annotation tpu-provisioner.io/adopt: \"true\" to manage it, or "
                         "choose another name");
  }

  void PlanPolicies() {
    std::set<std::string> seen;
    for (const auto& dp : desired_.policies) {
      const auto& want = dp.resource;
      std::string id = want.region + "/" + want.name;
      if (!seen.insert(id).second) continue;  // several slices or pools share one policy
      wanted_policies_.insert(id);
      auto it = lc_.policies.find(id);
      if (it == lc_.policies.end()) {
        Action a = NewAction(ActionKind::kCreate, PolicyRef(want), dp.source, "declared, not found");
        a.workload_policy = want;
        Add(std::move(a));
        continue;
      }
      const cloud::WorkloadPolicy& live = *it->second;
      ComputeDiff d = DiffWorkloadPolicy(want, live);
      if (!OwnedBy(live.description, tp_.key) && !dp.annotations.adopt) {
        // A policy the user made is used as it is, as long as it fits.
        if (d.kind != ActionKind::kNoop) {
          Conflict("workload policy " + want.name + " (acceleratorTopology " +
                       live.accelerator_topology + ", wanted " + want.accelerator_topology + ")",
                   dp.source);
        } else {
          Action a = NewAction(ActionKind::kNoop, PolicyRef(want), dp.source,
                               "exists, not managed: used as it is");
          Add(std::move(a));
        }
        continue;
      }
      Action a = NewAction(d.kind, PolicyRef(want), dp.source,
                           d.kind == ActionKind::kNoop ? "in sync" : "immutable fields changed");
      a.changes = std::move(d.changes);
      a.workload_policy = want;
      Add(std::move(a));
    }
  }

  void PlanTemplates() {
    for (const auto& dt : desired_.templates) {
      const auto& want = dt.resource;
      wanted_templates_.insert(want.name);
      auto it = lc_.templates.find(want.name);
      Action a = NewAction(it == lc_.templates.end() ? ActionKind::kCreate : ActionKind::kNoop,
                           TemplateRef(want.name), dt.source,
                           it == lc_.templates.end()
                               ? "declared, not found; templates are immutable, so a changed "
                                 "instanceConfig is a new template"
                               : "in sync");
      a.instance_template = want;
      Add(std::move(a));
    }
  }

  // The dependency id of a policy path "projects/P/regions/R/resourcePolicies/N".
  std::string PolicyDep(const std::string& path) const {
    std::string region;
    size_t at = path.find("/regions/");
    if (at != std::string::npos) region = path.substr(at + 9, path.find('/', at + 9) - at - 9);
    return ResourceRef{ResourceKind::kWorkloadPolicy, tp_.project, region, "", LastSegment(path)}.Id();
  }

  // Live pools that fill a desired slot: the pool with the slot's name (any
  // owner: an unmanaged one is a conflict or an adoption) first, then owned
  // pools labelled with the slot (create-before-delete replacements), by name.
  std::vector<const cloud::NodePool*> SlotCandidates(const std::string& slot) const {
    std::vector<const cloud::NodePool*> out;
    if (!cluster_) return out;
    for (const auto& p : cluster_->node_pools)
      if (p.name == slot) out.push_back(&p);
    std::vector<const cloud::NodePool*> labelled;
    for (const auto* p : OwnedPools())
      if (p->name != slot && SlotOf(*p) == slot) labelled.push_back(p);
    std::sort(labelled.begin(), labelled.end(),
              [](const auto* a, const auto* b) { return a->name < b->name; });
    out.insert(out.end(), labelled.begin(), labelled.end());
    return out;
  }

  // One desired slot against the live pools that fill it. Usually one pool,
  // of the slot's name. Several after a create-before-delete replace was
  // interrupted between its create and its delete: the first that needs no
  // replace (and is not broken) is kept, the others are deleted as
  // superseded; when none fits, the first healthy one is replaced and the
  // others deleted.
  // A release channel keeps node auto-upgrade on: a manifest that turns it
  // off is refused here, at its line, rather than by GKE at apply time
  // (400 "Auto_upgrade cannot be false when release_channel REGULAR is set.").
  void CheckReleaseChannel(const manifest::Target& t) {
    if (!cluster_ || cluster_->release_channel.empty()) return;
    for (const auto& spec : t.pools) {
      if (!spec.management || spec.management->auto_upgrade.value_or(true)) continue;
      manifest::Error e{spec.management->auto_upgrade_at, "spec.management.autoUpgrade",
                        "false is refused by cluster " + tp_.cluster + ": it is in release channel " +
                            cluster_->release_channel +
                            ", where node auto-upgrade cannot be disabled (leave autoUpgrade out, or "
                            "set it to true)"};
      tp_.errors.push_back(e.ToString());
    }
  }

  void PlanPools() {
    for (const auto& dp : desired_.pools) {
      const manifest::TPUNodePool& spec = *dp.spec;
      const std::string source = SourceOf(spec.where, "TPUNodePool", spec.name);
      const std::string& slot = dp.pool.name;
      claimed_pools_.insert(slot);
      std::vector<std::string> deps;
      if (spec.shape.placement == catalog::Placement::kWorkloadPolicy)
        deps.push_back(ResourceRef{ResourceKind::kWorkloadPolicy, tp_.project,
                                   RegionOfZone(spec.location), "", WorkloadPolicyName(spec)}
                           .Id());
      std::vector<const cloud::NodePool*> candidates = SlotCandidates(slot);
      if (candidates.empty()) {
        Action a = NewAction(ActionKind::kCreate, PoolRef(slot), source,
                             "slice " + std::to_string(dp.slice) + " declared, not found");
        a.node_pool = dp.pool;
        a.blast = {dp.chips, 0, dp.hosts, 0, dp.multi_host, dp.autoscaled};
        a.depends_on = deps;
        Add(std::move(a));
        continue;
      }
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
        PoolDiff d = DiffNodePool(AsPoolNamed(dp.pool, lp->name), *lp, opts);
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
      PlanSlotPool(dp, *keeper->live, keeper->own, keeper->broken, std::move(keeper->diff), source, deps);
    }
  }

  // The delete of a pool that fills a slot another pool fills too.
  void PlanSuperseded(const cloud::NodePool& lp, const std::string& keeper, bool keeper_replaced) {
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

  void PlanSlotPool(const DesiredPool& dp, const cloud::NodePool& lp, Ownership own, bool broken,
                    PoolDiff d, const std::string& source, const std::vector<std::string>& deps) {
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
      if (tp_.replace_strategy == manifest::ReplaceStrategy::kCreateBeforeDelete) {
        name = ReplacementPoolName(dp.pool);
        if (name == lp.name) name = slot;  // repairing a broken replacement of the same spec
        a.reason += "; the replacement " + name + " is created before " + lp.name + " is deleted";
      } else if (lp.name != slot) {
        a.reason += "; the replacement takes the slot's name " + slot;
      }
      a.node_pool = AsPoolNamed(dp.pool, name);
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

  void PlanGroups() {
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

  // Owned resources no manifest declares any more: deleted (slices from the
  // highest index down), released (deletion-policy: abandon), or kept (prune: false).
  void PlanUndeclared() {
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

  bool UndeclaredDeleteAllowed(const std::string& what) {
    if (prune_) return true;
    tp_.warnings.push_back("prune: false: kept " + what + ", which no manifest declares");
    return false;
  }

  void Add(Action a) { tp_.actions.push_back(std::move(a)); }

  // Execution order and the dependencies between Compute objects:
  //   1. node pool deletes (capacity and quota are freed before anything new
  //      asks for them), highest slice index first;
  //   2. MIG deletes;
  //   3. workload policies, templates, node pools and MIGs, in that order;
  //   4. template deletes, then workload policy deletes, after every MIG and
  //      node pool action that may still use them.
  void Finish() {
    auto rank = [](const Action& a) {
      bool del = a.kind == ActionKind::kDelete;
      switch (a.resource.kind) {
        case ResourceKind::kNodePool: return del ? 0 : 4;
        case ResourceKind::kInstanceGroupManager: return del ? 1 : 5;
        case ResourceKind::kWorkloadPolicy: return del ? 7 : 2;
        case ResourceKind::kInstanceTemplate: return del ? 6 : 3;
      }
      return 8;
    };
    std::stable_sort(tp_.actions.begin(), tp_.actions.end(),
                     [&](const Action& a, const Action& b) { return rank(a) < rank(b); });
    std::set<std::string> changing;
    for (const auto& a : tp_.actions)
      if (a.changes_something()) changing.insert(a.resource.Id());
    for (auto& a : tp_.actions) {
      if (a.kind == ActionKind::kDelete && (a.resource.kind == ResourceKind::kInstanceTemplate ||
                                            a.resource.kind == ResourceKind::kWorkloadPolicy)) {
        for (const auto& b : tp_.actions) {
          if (!b.changes_something() || &a == &b) continue;
          bool user = b.resource.kind == ResourceKind::kInstanceGroupManager ||
                      b.resource.kind == ResourceKind::kNodePool ||
                      (a.resource.kind == ResourceKind::kWorkloadPolicy &&
                       b.resource.kind == ResourceKind::kInstanceTemplate);
          if (user) a.depends_on.push_back(b.resource.Id());
        }
      }
      // Keep only dependencies on resources this plan changes.
      std::erase_if(a.depends_on, [&](const std::string& d) { return !changing.count(d); });
      std::sort(a.depends_on.begin(), a.depends_on.end());
      a.depends_on.erase(std::unique(a.depends_on.begin(), a.depends_on.end()), a.depends_on.end());
    }
    ApplyGuards(tp_, o_.allow_mass_delete);
  }

  const cloud::ProjectState* ps_;
  const PlanOptions& o_;
  LiveCompute lc_;
  TargetPlan tp_;
  const cloud::Cluster* cluster_ = nullptr;
  DesiredTarget desired_;
  bool prune_ = true;
  // Live pool names a desired slot accounts for (its own name included).
  std::set<std::string> claimed_pools_;
  std::set<std::string> wanted_policies_, wanted_templates_, wanted_groups_;
};

const cloud::ProjectState* FindProject(const cloud::LiveState& live, const std::string& project) {
  auto it = live.projects.find(project);
  return it == live.projects.end() ? nullptr : &it->second;
}

}  // namespace

std::vector<std::string> ProjectsToRefresh(const manifest::Repo& repo, const PlanOptions& options) {
  std::set<std::string> projects;
  for (const auto& t : repo.targets)
    if (Selected(t.Key(), options)) projects.insert(t.project);
  for (const auto& key : options.only_targets) {
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

  std::set<std::string> declared;
  for (const auto& t : repo.targets) {
    declared.insert(t.Key());
    if (!Selected(t.Key(), options)) continue;
    TargetPlanner planner(t.project, t.cluster, FindProject(live, t.project), options);
    plan.targets.push_back(planner.Plan(t));
    AddCapacityShapes(&plan.targets.back(), FindProject(live, t.project));
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
    TargetPlanner planner(project, key.substr(slash + 1), FindProject(live, project), options);
    plan.targets.push_back(planner.PlanVanished());
    AddCapacityShapes(&plan.targets.back(), FindProject(live, project));
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
