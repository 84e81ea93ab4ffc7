// Built-in and Kueue resource types, with the list types their schemas declare
// (Kueue: apis/kueue/*/clusterqueue_types.go markers; core: the OpenAPI spec).
#include "sim/kube/resource_type.h"

namespace tpu::kubesim {

std::vector<ResourceType> BuiltinTypes() {
  ListTypes node_lists;
  node_lists.map_keys["status.conditions"] = {"type"};
  node_lists.map_keys["spec.taints"] = {"key", "effect"};
  ListTypes pod_lists;
  pod_lists.map_keys["status.conditions"] = {"type"};
  pod_lists.map_keys["spec.containers"] = {"name"};
  return {
      {"", "v1", "namespaces", "Namespace", false, true, {}},
      {"", "v1", "nodes", "Node", false, true, node_lists},
      {"", "v1", "pods", "Pod", true, true, pod_lists},
      {"", "v1", "events", "Event", true, false, {}},
      {"", "v1", "configmaps", "ConfigMap", true, false, {}},
      {"coordination.k8s.io", "v1", "leases", "Lease", true, false, {}},
  };
}

std::vector<ResourceType> KueueTypes(const std::string& version) {
  const std::string g = "kueue.x-k8s.io";
  // resourceGroups is atomic; flavors and resources inside it are keyed by
  // name, but inside an atomic list that does not matter for ownership.
  ListTypes cq;
  cq.map_keys["status.conditions"] = {"type"};
  cq.map_keys["status.flavorsUsage"] = {"name"};
  cq.map_keys["status.flavorsUsage[].resources"] = {"name"};
  cq.map_keys["status.flavorsReservation"] = {"name"};
  cq.map_keys["status.flavorsReservation[].resources"] = {"name"};
  ListTypes wl;
  wl.map_keys["status.conditions"] = {"type"};
  ListTypes rf;
  rf.sets.insert("spec.nodeTaints");
  return {
      {g, version, "resourceflavors", "ResourceFlavor", false, false, rf},
      {g, version, "clusterqueues", "ClusterQueue", false, true, cq},
      {g, version, "cohorts", "Cohort", false, true, {}},
      {g, version, "localqueues", "LocalQueue", true, true, {}},
      {g, version, "workloads", "Workload", true, true, wl},
  };
}

std::vector<ResourceType> JobSetTypes() {
  return {{"jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", true, true, {}}};
}

}  // namespace tpu::kubesim
