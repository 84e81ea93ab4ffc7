// A capacity repository in four stages that together exercise every kind of
// action on both resource families: GKE node pools (target proj-rel/gke) and
// a TPUNodeGroup on self-managed GCE (target proj-rel/gce: workload policy,
// instance template, managed instance group).
//
//   stage 0  creates   a (v6e 2x2, 2 slices), b (v6e 4x4, multi-host), s (v6e 1x1, 1 node), group g
//   stage 1  resizes   a → 3 slices (a create), s → 2 nodes (setSize), b gets a label (update)
//   stage 2  replaces  b becomes spot (replace), g's image changes (new template, BULK MIG replaced)
//   stage 3  deletes   a → 1 slice, s removed, the gce directory removed (needs --allow-mass-delete)
//
// Each stage lists what must exist when it has converged, and which existing
// resources it replaces (so deleting them is allowed).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace tpu::reliability {

inline constexpr const char* kProject = "proj-rel";
inline constexpr const char* kGkeRegion = "us-east5";

struct Stage {
  std::string name;
  std::map<std::string, std::string> files;  // repo path → content; every other file removed
  // GKE pools "gke:gke/NAME" → node count, MIG "mig:NAME" → target size.
  std::map<std::string, int> pools;
  int templates = 0, policies = 0;           // Compute objects with generated names
  std::set<std::string> replaces;            // inventory keys this stage deletes and re-creates
};

inline std::string V6ePool(const std::string& name, const std::string& topology, const std::string& extra) {
  return "apiVersion: tpu-provisioner.io/v1alpha1\nkind: TPUNodePool\nmetadata:\n  name: " + name +
         "\nspec:\n  accelerator: v6e\n  topology: " + topology + "\n  location: us-east5-b\n" + extra;
}

inline std::string NodeGroup(const std::string& image) {
  return "apiVersion: tpu.google.com/v1alpha1\nkind: TPUNodeGroup\nmetadata:\n  name: g\nspec:\n"
         "  project: proj-rel\n  nodeLocation: us-central2-b\n  nodeCount: 2\n  topology: 2x2x2\n"
         "  targetSizePolicyMode: \"BULK\"\n  instanceConfig:\n    machineType: tpu7x-standard-4t\n"
         "    provisioningModel: RESERVATION_BOUND\n    reservation: res-rel\n"
         "    image: projects/proj-rel/global/images/" + image + "\n";
}

inline std::string GkeCluster() {
  return "apiVersion: tpu-provisioner.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: gke\n"
         "spec:\n  location: us-east5\n";
}

// `gke_resize`: whether stage 1 resizes s (see ResizeVisible in crash_harness.h).
inline std::vector<Stage> CapacityStages(bool gke_resize = true) {
  const int s_nodes = gke_resize ? 2 : 1;
  const std::string s_pool = V6ePool("s", "1x1", "  nodeCount: " + std::to_string(s_nodes) + "\n");
  const std::string cluster = "deploy/proj-rel/gke/cluster.yaml";
  const std::string pools = "deploy/proj-rel/gke/pools.yaml";
  const std::string group = "deploy/proj-rel/gce/group.yaml";
  const std::string b_plain = V6ePool("b", "4x4", "");
  const std::string b_labelled = V6ePool("b", "4x4", "  nodeConfig:\n    labels:\n      team: research\n");
  // A pool's capacity type is fixed when it is created: a change is a replace.
  const std::string b_spot =
      V6ePool("b", "4x4", "  capacity:\n    type: spot\n  nodeConfig:\n    labels:\n      team: research\n");
  std::vector<Stage> stages;
  stages.push_back({"creates",
                    {{cluster, GkeCluster()},
                     {pools, V6ePool("a", "2x2", "  slices: 2\n") + "---\n" + b_plain + "---\n" +
                                 V6ePool("s", "1x1", "  nodeCount: 1\n")},
                     {group, NodeGroup("image-1")}},
                    {{"gke:gke/a-0", 1}, {"gke:gke/a-1", 1}, {"gke:gke/b-0", 4}, {"gke:gke/s-0", 1},
                     {"mig:g", 2}},
                    1, 1, {}});
  stages.push_back({"resizes",
                    {{cluster, GkeCluster()},
                     {pools, V6ePool("a", "2x2", "  slices: 3\n") + "---\n" + b_labelled + "---\n" +
                                 s_pool},
                     {group, NodeGroup("image-1")}},
                    {{"gke:gke/a-0", 1}, {"gke:gke/a-1", 1}, {"gke:gke/a-2", 1}, {"gke:gke/b-0", 4},
                     {"gke:gke/s-0", s_nodes}, {"mig:g", 2}},
                    1, 1, {}});
  stages.push_back({"replaces",
                    {{cluster, GkeCluster()},
                     {pools, V6ePool("a", "2x2", "  slices: 3\n") + "---\n" + b_spot + "---\n" +
                                 s_pool},
                     {group, NodeGroup("image-2")}},
                    {{"gke:gke/a-0", 1}, {"gke:gke/a-1", 1}, {"gke:gke/a-2", 1}, {"gke:gke/b-0", 4},
                     {"gke:gke/s-0", s_nodes}, {"mig:g", 2}},
                    1, 1, {"gke:gke/b-0", "mig:g"}});
  stages.push_back({"deletes",
                    {{cluster, GkeCluster()},
                     {pools, V6ePool("a", "2x2", "  slices: 1\n") + "---\n" + b_spot}},
                    {{"gke:gke/a-0", 1}, {"gke:gke/b-0", 4}},
                    0, 0, {}});
  return stages;
}

}  // namespace tpu::reliability
