// Diffs of workload policies and managed instance groups.
#include "plan/compute_diff.h"

#include <algorithm>

#include "plan/field_text.h"
#include "plan/normalize.h"

namespace tpu::plan {

ComputeDiff DiffWorkloadPolicy(const cloud::WorkloadPolicy& desired, const cloud::WorkloadPolicy& live) {
  ComputeDiff d;
  if (!desired.type.empty() && desired.type != live.type)
    d.changes.push_back({"workloadPolicy.type", Quote(live.type), Quote(desired.type), true});
  if (desired.accelerator_topology != live.accelerator_topology)
    d.changes.push_back({"workloadPolicy.acceleratorTopology", Quote(live.accelerator_topology),
                         Quote(desired.accelerator_topology), true});
  // Left out, the mode is the API's default.
  auto mode = [](const std::string& m) { return m.empty() ? std::string("AUTO_CONNECT") : m; };
  if (mode(desired.accelerator_topology_mode) != mode(live.accelerator_topology_mode))
    d.changes.push_back({"workloadPolicy.acceleratorTopologyMode", Quote(mode(live.accelerator_topology_mode)),
                         Quote(mode(desired.accelerator_topology_mode)), true});
  if (!d.changes.empty()) d.kind = ActionKind::kReplace;
  return d;
}

ComputeDiff DiffInstanceGroupManager(const cloud::InstanceGroupManager& desired,
                                     const cloud::InstanceGroupManager& live) {
  ComputeDiff d;
  const bool bulk = desired.target_size_policy_mode == "BULK";
  std::string live_mode = live.target_size_policy_mode.empty() ? "INDIVIDUAL" : live.target_size_policy_mode;
  if (desired.target_size_policy_mode != live_mode)
    d.changes.push_back({"targetSizePolicy.mode", Quote(live_mode),
                         Quote(desired.target_size_policy_mode), true});
  if (!live.base_instance_name.empty() && desired.base_instance_name != live.base_instance_name)
    d.changes.push_back({"baseInstanceName", Quote(live.base_instance_name),
                         Quote(desired.base_instance_name), true});
  if (ResourcePath(desired.instance_template) != ResourcePath(live.instance_template)) {
    d.changes.push_back({"instanceTemplate", Quote(ResourcePath(live.instance_template)),
                         Quote(ResourcePath(desired.instance_template)), bulk});
    if (!bulk) d.update_calls.push_back(UpdateCall::kSetInstanceTemplate);
  }
  // The slice's workload policy is set when its group is created.
  if (ResourcePath(desired.workload_policy) != ResourcePath(live.workload_policy))
    d.changes.push_back({"resourcePolicies.workloadPolicy", Quote(ResourcePath(live.workload_policy)),
                         Quote(ResourcePath(desired.workload_policy)), true});
  if (desired.target_size != live.target_size) {
    // A BULK group is one atomic slice: its size cannot change in place.
    d.changes.push_back({"targetSize", std::to_string(live.target_size),
                         std::to_string(desired.target_size), bulk});
    if (!bulk) d.update_calls.push_back(UpdateCall::kResizeGroup);
  }
  if (std::any_of(d.changes.begin(), d.changes.end(), [](const auto& c) { return c.forces_replace; })) {
    d.kind = ActionKind::kReplace;
    d.update_calls.clear();
  } else if (!d.changes.empty()) {
    d.kind = d.update_calls == std::vector<UpdateCall>{UpdateCall::kResizeGroup} ? ActionKind::kResize
                                                                                 : ActionKind::kUpdate;
  }
  return d;
}

}  // namespace tpu::plan
