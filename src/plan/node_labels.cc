// Node labels of a TPUNodeGroup: see node_labels.h.
#include "plan/node_labels.h"

#include "catalog/catalog.h"

namespace tpu::plan {

std::map<std::string, std::string> NodeGroupLabels(const manifest::TPUNodeGroup& group) {
  std::map<std::string, std::string> labels = {{kNodeGroupLabel, group.name}};
  if (group.shape && group.shape->generation) labels[kTpuAcceleratorLabel] = group.shape->generation->accelerator;
  if (!group.topology.empty()) labels[kTpuTopologyLabel] = group.topology;
  int per_vm = group.instance_config ? catalog::ChipsPerVm(group.instance_config->machine_type) : 0;
  if (per_vm == 0 && group.shape) per_vm = group.shape->machine_type.chips_per_vm;
  if (per_vm > 0) labels[kAcceleratorCountLabel] = std::to_string(per_vm);
  return labels;
}

std::string KubeLabelsValue(const std::map<std::string, std::string>& labels) {
  std::string out;
  for (const auto& [k, v] : labels) out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

}  // namespace tpu::plan
