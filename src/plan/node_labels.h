// The Kubernetes labels a TPUNodeGroup's nodes carry (docs/architecture.md,
// "TPUNodeGroup nodes"): GKE's TPU node labels, so one nodeSelector works on
// GKE pools and on these nodes alike, and the group's own, which the device
// plugin selects on and teardown finds the group's nodes by. The template's
// kube-labels metadata and the labels patched onto joined Nodes both come
// from here.
#pragma once

#include <map>
#include <string>

#include "manifest/types.h"

namespace tpu::plan {

inline constexpr const char* kNodeGroupLabel = "cloud.google.com/tpu-node-group";
inline constexpr const char* kTpuAcceleratorLabel = "cloud.google.com/gke-tpu-accelerator";
inline constexpr const char* kTpuTopologyLabel = "cloud.google.com/gke-tpu-topology";
inline constexpr const char* kAcceleratorCountLabel = "cloud.google.com/gke-accelerator-count";

// Labels whose value is unknown (a template the user brings names no machine
// type) are left out.
std::map<std::string, std::string> NodeGroupLabels(const manifest::TPUNodeGroup& group);

// "k=v,k=v" in key order: the kube-labels metadata value the kubelet's
// --node-labels takes.
std::string KubeLabelsValue(const std::map<std::string, std::string>& labels);

}  // namespace tpu::plan
