// Names of the plan model's enums, resource ids and plan-wide counts.
#include "plan/model.h"

#include <array>
#include <utility>

namespace tpu::plan {
namespace {

template <typename E, size_t N>
bool ParseName(const std::array<std::pair<E, const char*>, N>& table, const std::string& s, E* out) {
  for (const auto& [e, name] : table) {
    if (s == name) {
      *out = e;
      return true;
    }
  }
  return false;
}

template <typename E, size_t N>
const char* NameOf(const std::array<std::pair<E, const char*>, N>& table, E e) {
  for (const auto& [k, name] : table)
    if (k == e) return name;
  return "?";
}

constexpr std::array<std::pair<ActionKind, const char*>, 6> kActionKinds = {{
    {ActionKind::kNoop, "noop"},
    {ActionKind::kCreate, "create"},
    {ActionKind::kUpdate, "update"},
    {ActionKind::kResize, "resize"},
    {ActionKind::kReplace, "replace"},
    {ActionKind::kDelete, "delete"},
}};

constexpr std::array<std::pair<ResourceKind, const char*>, 4> kResourceKinds = {{
    {ResourceKind::kNodePool, "nodePool"},
    {ResourceKind::kWorkloadPolicy, "workloadPolicy"},
    {ResourceKind::kInstanceTemplate, "instanceTemplate"},
    {ResourceKind::kInstanceGroupManager, "instanceGroupManager"},
}};

constexpr std::array<std::pair<UpdateCall, const char*>, 7> kUpdateCalls = {{
    {UpdateCall::kUpdateNodePool, "updateNodePool"},
    {UpdateCall::kUpdateLocations, "updateLocations"},
    {UpdateCall::kSetAutoscaling, "setAutoscaling"},
    {UpdateCall::kSetManagement, "setManagement"},
    {UpdateCall::kSetSize, "setSize"},
    {UpdateCall::kSetInstanceTemplate, "setInstanceTemplate"},
    {UpdateCall::kResizeGroup, "resizeGroup"},
}};

constexpr std::array<std::pair<TargetStatus, const char*>, 4> kTargetStatuses = {{
    {TargetStatus::kPlanned, "planned"},
    {TargetStatus::kBlocked, "blocked"},
    {TargetStatus::kRefused, "refused"},
    {TargetStatus::kSuspended, "suspended"},
}};

}  // namespace

std::string ResourceRef::Id() const {
  std::string id = std::string(ResourceKindName(kind)) + ":" + project + "/";
  switch (kind) {
    case ResourceKind::kNodePool: return id + location + "/" + cluster + "/" + name;
    case ResourceKind::kWorkloadPolicy:
    case ResourceKind::kInstanceGroupManager: return id + location + "/" + name;
    case ResourceKind::kInstanceTemplate: return id + name;
  }
  return id + name;
}

Summary Plan::Summarize() const {
  Summary s;
  for (const auto& t : targets) {
    if (!t.executable()) continue;
    for (const auto& a : t.actions) {
      switch (a.kind) {
        case ActionKind::kNoop: ++s.noop; break;
        case ActionKind::kCreate: ++s.create; break;
        case ActionKind::kUpdate:
        case ActionKind::kResize: ++(a.adopt_only ? s.adopt : s.update); break;
        case ActionKind::kReplace: ++s.replace; break;
        case ActionKind::kDelete: ++s.remove; break;
      }
      s.chips_created += a.blast.chips_created;
      s.chips_destroyed += a.blast.chips_destroyed;
      if (a.blast.autoscaled) s.chips_possible += a.blast.chips_created;
    }
  }
  return s;
}

bool Plan::HasChanges() const {
  for (const auto& t : targets) {
    if (!t.executable()) continue;
    for (const auto& a : t.actions)
      if (a.changes_something()) return true;
  }
  return false;
}

bool Plan::OnlyAdoptions() const {
  bool any = false;
  for (const auto& t : targets) {
    if (!t.executable()) continue;
    for (const auto& a : t.actions) {
      if (!a.changes_something()) continue;
      if (!a.adopt_only) return false;
      any = true;
    }
  }
  return any;
}

bool Plan::HasErrors() const {
  if (!errors.empty()) return true;
  for (const auto& t : targets)
    if (t.status == TargetStatus::kBlocked || t.status == TargetStatus::kRefused || !t.blocked_actions.empty())
      return true;
  return false;
}

const char* ActionKindName(ActionKind k) { return NameOf(kActionKinds, k); }
const char* ResourceKindName(ResourceKind k) { return NameOf(kResourceKinds, k); }
const char* UpdateCallName(UpdateCall c) { return NameOf(kUpdateCalls, c); }
const char* TargetStatusName(TargetStatus s) { return NameOf(kTargetStatuses, s); }
bool ParseActionKind(const std::string& s, ActionKind* out) { return ParseName(kActionKinds, s, out); }
bool ParseResourceKind(const std::string& s, ResourceKind* out) { return ParseName(kResourceKinds, s, out); }
bool ParseUpdateCall(const std::string& s, UpdateCall* out) { return ParseName(kUpdateCalls, s, out); }
bool ParseTargetStatus(const std::string& s, TargetStatus* out) { return ParseName(kTargetStatuses, s, out); }

}  // namespace tpu::plan
