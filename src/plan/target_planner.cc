// TargetPlanner (target_planner.h): the target and its cluster, ownership
// counts, workload policies and templates, and the order of the actions.
#include "plan/target_planner.h"

#include <algorithm>
#include <map>
#include <set>

#include "catalog/catalog.h"
#include "plan/capacity_shape.h"
#include "plan/compute_diff.h"
#include "plan/field_text.h"
#include "plan/fingerprint.h"
#include "plan/guards.h"
#include "plan/normalize.h"
#include "plan/pool_slot.h"

namespace tpu::plan {

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

TargetPlanner::TargetPlanner(const std::string& project, const std::string& cluster, const cloud::ProjectState* ps,
                             const LiveCompute& lc, const PlanOptions& o)
    : ps_(ps), o_(o), lc_(lc) {
  tp_.project = project;
  tp_.cluster = cluster;
  tp_.key = project + "/" + cluster;
}

TargetPlan TargetPlanner::Plan(const manifest::Target& t) {
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
  target_ = &t;
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

TargetPlan TargetPlanner::PlanVanished() {
  tp_.vanished = true;
  ResolveCluster(std::nullopt, false);
  CountOwned();
  ListWorkloadPools();
  PlanUndeclared();
  Finish();
  return std::move(tp_);
}

TargetPlan TargetPlanner::Blocked() {
  tp_.status = TargetStatus::kBlocked;
  tp_.actions.clear();
  return std::move(tp_);
}

void TargetPlanner::ResolveCluster(const std::optional<std::string>& location, bool required) {
  std::vector<const cloud::Cluster*> found;
  if (ps_)
    for (const auto& c : ps_->clusters)
      if (c.name == tp_.cluster && (!location || c.location == *location)) found.push_back(&c);
  if (found.size() == 1) {
    cluster_ = found[0];
    tp_.location = cluster_->location;
    const std::string hash = TargetHash(tp_.key);
    for (const auto& p : cluster_->node_pools)
      if (PoolOwnershipByHash(p, hash) == Ownership::kOwned) {
        owned_.push_back(&p);
        owned_slots_.push_back(SlotOf(p));
      }
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

void TargetPlanner::ListWorkloadPools() {
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

void TargetPlanner::CountOwned() {
  for (const auto* p : OwnedPools()) tp_.owned_chips += PoolChips(p->machine_type, p->node_count);
  for (const auto& [id, g] : lc_.groups)
    if (OwnedBy(g->description, tp_.key)) tp_.owned_chips += GroupChips(*g, lc_);
}

Action TargetPlanner::NewAction(ActionKind kind, ResourceRef ref, std::string source, std::string reason) {
  Action a;
  a.kind = kind;
  a.resource = std::move(ref);
  a.target = tp_.key;
  a.source = std::move(source);
  a.reason = std::move(reason);
  return a;
}

ResourceRef TargetPlanner::PoolRef(const std::string& name) const {
  return {ResourceKind::kNodePool, tp_.project, tp_.location, tp_.cluster, name};
}

ResourceRef TargetPlanner::PolicyRef(const cloud::WorkloadPolicy& p) const {
  return {ResourceKind::kWorkloadPolicy, tp_.project, p.region, "", p.name};
}

ResourceRef TargetPlanner::TemplateRef(const std::string& name) const {
  return {ResourceKind::kInstanceTemplate, tp_.project, "", "", name};
}

ResourceRef TargetPlanner::GroupRef(const cloud::InstanceGroupManager& g) const {
  return {ResourceKind::kInstanceGroupManager, tp_.project, g.zone, "", g.name};
}

void TargetPlanner::Conflict(const std::string& what, const std::string& source) {
  tp_.errors.push_back(source + ": " + what +
                       " already exists and is not managed by tpu-provisioner for this target; "
                       "add the annotation tpu-provisioner.io/adopt: \"true\" to manage it, or "
                       "choose another name");
}

void TargetPlanner::PlanPolicies() {
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

void TargetPlanner::PlanTemplates() {
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

std::string TargetPlanner::PolicyDep(const std::string& path) const {
  std::string region;
  size_t at = path.find("/regions/");
  if (at != std::string::npos) region = path.substr(at + 9, path.find('/', at + 9) - at - 9);
  return ResourceRef{ResourceKind::kWorkloadPolicy, tp_.project, region, "", LastSegment(path)}.Id();
}

void TargetPlanner::CheckReleaseChannel(const manifest::Target& t) {
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

void TargetPlanner::Add(Action a) { tp_.actions.push_back(std::move(a)); }

void TargetPlanner::Finish() {
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

}  // namespace tpu::plan
