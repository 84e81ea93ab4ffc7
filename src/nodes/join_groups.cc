// JoinGroupsOf: a target's TPUNodeGroups as the node join sees them (node_joiner.h).
#include "nodes/node_joiner.h"
#include "plan/node_labels.h"

namespace tpu::nodes {

std::vector<JoinGroup> JoinGroupsOf(const manifest::Target& target) {
  std::vector<JoinGroup> out;
  for (const auto& g : target.groups) {
    JoinGroup j;
    j.name = g.name;
    j.project = target.project;
    j.zone = g.node_location;
    j.mig = g.name;  // the MIG is named after its group (plan/desired.cc)
    j.requested = g.node_count;
    j.labels = plan::NodeGroupLabels(g);
    if (g.bootstrap_kubernetes) {
      j.bootstrap = true;
      // controlPlaneIP is an address; kubeadm's API server listens on 6443.
      j.control_plane = g.bootstrap_kubernetes->control_plane_ip;
      if (!j.control_plane.empty() && j.control_plane.find(':') == std::string::npos) j.control_plane += ":6443";
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace tpu::nodes
