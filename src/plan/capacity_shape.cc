// Capacity shapes of plan actions (see capacity_shape.h).
#include "plan/capacity_shape.h"

#include <algorithm>

#include "catalog/catalog.h"

namespace tpu::plan {
namespace {

std::string LastSegment(const std::string& s) {
  auto p = s.find_last_of('/');
  return p == std::string::npos ? s : s.substr(p + 1);
}

std::string CapacityOfPool(const cloud::NodePool& p) {
  if (p.flex_start) return "flexStart";
  if (p.spot) return "spot";
  if (p.reservation_affinity &&
      p.reservation_affinity->consume_reservation_type == "SPECIFIC_RESERVATION")
    return "reservation";
  return "onDemand";
}

std::string CapacityOfTemplate(const cloud::InstanceTemplate& t) {
  if (t.provisioning_model == "SPOT") return "spot";
  if (t.provisioning_model == "RESERVATION_BOUND" || !t.reservation.empty()) return "reservation";
  return "onDemand";
}

int GenerationRank(const std::string& name) {
  const auto& gens = catalog::Generations();
  for (size_t i = 0; i < gens.size(); ++i)
    if (gens[i].name == name) return static_cast<int>(i);
  return static_cast<int>(gens.size());
}

// What the target's own actions and live state say about Compute objects.
struct ComputeIndex {
  std::map<std::string, std::string> policy_topologies;  // policy name → acceleratorTopology
  std::map<std::string, const cloud::InstanceTemplate*> templates;  // by name
};

ComputeIndex IndexCompute(const TargetPlan& t, const cloud::ProjectState* live) {
  ComputeIndex x;
  if (live) {
    for (const auto& p : live->workload_policies) x.policy_topologies[p.name] = p.accelerator_topology;
    for (const auto& tm : live->instance_templates) x.templates[tm.name] = &tm;
  }
  for (const auto& a : t.actions) {
    if (a.workload_policy) x.policy_topologies[a.workload_policy->name] = a.workload_policy->accelerator_topology;
    if (a.instance_template) x.templates[a.instance_template->name] = &*a.instance_template;
  }
  return x;
}

CapacityShape ShapeOfGroup(const cloud::InstanceGroupManager& g, const ComputeIndex& x) {
  CapacityShape s;
  auto t = x.templates.find(LastSegment(g.instance_template));
  if (t == x.templates.end()) return s;
  const catalog::Generation* gen = catalog::GenerationOfMachineType(t->second->machine_type);
  if (!gen) return s;
  s.generation = gen->name;
  s.capacity = CapacityOfTemplate(*t->second);
  auto policy = x.policy_topologies.find(LastSegment(g.workload_policy));
  if (policy != x.policy_topologies.end()) s.topology = policy->second;
  else if (g.target_size == 1) s.topology = catalog::SingleHostTopology(t->second->machine_type);
  return s;
}

const cloud::NodePool* LivePool(const cloud::ProjectState* live, const ResourceRef& r) {
  if (!live) return nullptr;
  for (const auto& c : live->clusters) {
    if (c.name != r.cluster) continue;
    for (const auto& p : c.node_pools)
      if (p.name == r.name) return &p;
  }
  return nullptr;
}

}  // namespace

CapacityShape ShapeOfPool(const cloud::NodePool& pool,
                          const std::map<std::string, std::string>& policy_topologies) {
  CapacityShape s;
  const catalog::Generation* gen = catalog::GenerationOfMachineType(pool.machine_type);
  if (!gen) return s;
  s.generation = gen->name;
  s.capacity = CapacityOfPool(pool);
  if (pool.placement_policy && !pool.placement_policy->tpu_topology.empty()) {
    s.topology = pool.placement_policy->tpu_topology;
  } else if (pool.placement_policy && !pool.placement_policy->policy_name.empty()) {
    auto it = policy_topologies.find(LastSegment(pool.placement_policy->policy_name));
    if (it != policy_topologies.end()) s.topology = it->second;
  } else {
    s.topology = catalog::SingleHostTopology(pool.machine_type);
  }
  return s;
}

void AddCapacityShapes(TargetPlan* target, const cloud::ProjectState* live) {
  ComputeIndex x = IndexCompute(*target, live);
  for (auto& a : target->actions) {
    if (a.kind == ActionKind::kNoop) continue;
    CapacityShape body;
    if (a.node_pool) body = ShapeOfPool(*a.node_pool, x.policy_topologies);
    else if (a.instance_group_manager) body = ShapeOfGroup(*a.instance_group_manager, x);
    else continue;
    if (a.kind == ActionKind::kDelete) {
      a.destroyed_shape = body;  // a delete carries the live body
      continue;
    }
    a.created_shape = body;
    a.destroyed_shape = body;
    if (a.kind != ActionKind::kReplace) continue;
    // The old side of a replace may differ (spot → on-demand): read it live.
    if (a.node_pool) {
      if (const cloud::NodePool* old = LivePool(live, a.resource)) a.destroyed_shape = ShapeOfPool(*old, x.policy_topologies);
    } else if (live) {
      for (const auto& g : live->instance_group_managers)
        if (g.name == a.resource.name && g.zone == a.resource.location) a.destroyed_shape = ShapeOfGroup(g, x);
    }
  }
}

std::string ShapeText(const CapacityShape& s) {
  if (s.empty()) return "";
  std::string out = s.generation;
  if (!s.topology.empty()) out += " " + s.topology;
  if (!s.capacity.empty()) out += " " + s.capacity;
  return out;
}

std::vector<ShapeChips> ChipsByGenerationAndCapacity(const Plan& plan) {
  std::map<std::string, ShapeChips> by_key;
  std::map<std::string, int> rank;
  auto add = [&](const CapacityShape& s, int created, int destroyed) {
    if (!created && !destroyed) return;
    std::string key = s.empty() ? "other" : s.generation + (s.capacity.empty() ? "" : " " + s.capacity);
    auto& e = by_key[key];
    e.key = key;
    e.created += created;
    e.destroyed += destroyed;
    rank[key] = s.empty() ? 1 << 20 : GenerationRank(s.generation);
  };
  for (const auto& t : plan.targets) {
    if (!t.executable()) continue;
    for (const auto& a : t.actions) {
      if (!a.changes_something()) continue;
      add(a.created_shape.empty() ? a.destroyed_shape : a.created_shape, a.blast.chips_created, 0);
      add(a.destroyed_shape.empty() ? a.created_shape : a.destroyed_shape, 0, a.blast.chips_destroyed);
    }
  }
  std::vector<ShapeChips> out;
  for (auto& [k, v] : by_key) out.push_back(v);
  std::stable_sort(out.begin(), out.end(), [&](const ShapeChips& a, const ShapeChips& b) {
    return rank[a.key] < rank[b.key];
  });
  return out;
}

}  // namespace tpu::plan
