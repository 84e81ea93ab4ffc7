// Grouping of identical actions (see action_groups.h).
#include "plan/action_groups.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "plan/capacity_shape.h"

namespace tpu::plan {
namespace {

std::string GroupKey(const Action& a) {
  const CapacityShape& shape = a.created_shape.empty() ? a.destroyed_shape : a.created_shape;
  std::string key = std::string(ActionKindName(a.kind)) + "\n" + ResourceKindName(a.resource.kind) + "\n" +
                    ShapeText(shape) + "\n" + ShapeText(a.destroyed_shape);
  for (const auto& c : a.changes) key += "\n" + c.path + "=" + c.after + (c.forces_replace ? "!" : "");
  return key;
}

// "v6e-spot-39" → {"v6e-spot-", 39}; index -1 when the name has no numeric tail.
std::pair<std::string, long> SplitIndex(const std::string& name) {
  size_t i = name.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(name[i - 1]))) --i;
  if (i == name.size() || name.size() - i > 9) return {name, -1};
  return {name.substr(0, i), std::stol(name.substr(i))};
}

}  // namespace

std::string ResourceNoun(ResourceKind kind, size_t count) {
  bool many = count != 1;
  switch (kind) {
    case ResourceKind::kNodePool: return many ? "node pools" : "node pool";
    case ResourceKind::kWorkloadPolicy: return many ? "workload policies" : "workload policy";
    case ResourceKind::kInstanceTemplate: return many ? "instance templates" : "instance template";
    case ResourceKind::kInstanceGroupManager: return many ? "managed instance groups" : "managed instance group";
  }
  return "resources";
}

std::string NameRange(const std::vector<const Action*>& actions) {
  std::vector<std::string> names;
  for (const Action* a : actions) names.push_back(a->resource.name);
  if (names.empty()) return "";
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& n : v) s += (s.empty() ? "" : ", ") + n;
    return s;
  };
  if (names.size() <= 3) return join(names);
  // A run: one prefix, every index from the lowest to the highest once.
  auto [prefix, first] = SplitIndex(names.front());
  std::vector<long> indexes;
  bool run = first >= 0;
  for (const auto& n : names) {
    auto [p, i] = SplitIndex(n);
    if (p != prefix || i < 0) run = false;
    indexes.push_back(i);
  }
  if (run) {
    std::sort(indexes.begin(), indexes.end());
    for (size_t i = 1; i < indexes.size(); ++i) run = run && indexes[i] == indexes[i - 1] + 1;
  }
  if (run) {
    // "v6e-spot-0 … -39": the tail keeps the prefix's last separator.
    std::string sep = prefix.empty() || std::isalnum(static_cast<unsigned char>(prefix.back()))
                          ? prefix
                          : std::string(1, prefix.back());
    return prefix + std::to_string(indexes.front()) + " … " + sep + std::to_string(indexes.back());
  }
  return names[0] + ", " + names[1] + ", … " + names.back();
}

std::vector<ActionGroup> GroupActions(const TargetPlan& target) {
  std::vector<ActionGroup> groups;
  std::map<std::string, size_t> index;
  for (const auto& a : target.actions) {
    if (!a.changes_something()) continue;
    auto [it, added] = index.emplace(GroupKey(a), groups.size());
    if (added) {
      ActionGroup g;
      g.kind = a.kind;
      g.resource_kind = a.resource.kind;
      g.shape = ShapeText(a.created_shape.empty() ? a.destroyed_shape : a.created_shape);
      if (!a.created_shape.empty() && !a.destroyed_shape.empty() && a.created_shape != a.destroyed_shape)
        g.from_shape = ShapeText(a.destroyed_shape);
      g.changes = a.changes;
      g.reason = a.reason;
      groups.push_back(std::move(g));
    }
    ActionGroup& g = groups[it->second];
    if (!g.actions.empty()) {
      if (g.reason != a.reason) g.reason.clear();
      for (size_t i = 0; i < g.changes.size() && i < a.changes.size(); ++i)
        if (g.changes[i].before != a.changes[i].before) g.changes[i].before = "(varies)";
    }
    g.actions.push_back(&a);
    g.blast.chips_created += a.blast.chips_created;
    g.blast.chips_destroyed += a.blast.chips_destroyed;
    g.blast.hosts_created += a.blast.hosts_created;
    g.blast.hosts_destroyed += a.blast.hosts_destroyed;
    g.blast.multi_host = g.blast.multi_host || a.blast.multi_host;
  }
  return groups;
}

}  // namespace tpu::plan
