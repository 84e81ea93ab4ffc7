// Built-in and Kueue resource types, with the list types their schemas declare
// (Kueue: apis/kueue/*/clusterqueue_types.go markers; core: the OpenAPI spec).
#include "sim/kube/resource_type.h"

#include <string>

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
      {"", "v1", "secrets", "Secret", true, false, {}},
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
  // v1beta2 marks admissionChecksStrategy.admissionChecks listType=map keyed
  // by name and onFlavors listType=set; v1beta1 marks neither, so there both
  // lists (and spec.admissionChecks, a []string) are atomic.
  if (version == "v1beta2") {
    cq.map_keys["spec.admissionChecksStrategy.admissionChecks"] = {"name"};
    cq.sets.insert("spec.admissionChecksStrategy.admissionChecks[].onFlavors");
  }
  // provisioningrequestconfig_types.go: managedResources listType=set,
  // podSetUpdates.nodeSelector listType=map keyed by key.
  ListTypes prc;
  prc.sets.insert("spec.managedResources");
  prc.map_keys["spec.podSetUpdates.nodeSelector"] = {"key"};
  ListTypes ac;
  ac.map_keys["status.conditions"] = {"type"};
  return {
      {g, version, "resourceflavors", "ResourceFlavor", false, false, rf},
      {g, version, "clusterqueues", "ClusterQueue", false, true, cq},
      {g, version, "cohorts", "Cohort", false, true, {}},
      {g, version, "localqueues", "LocalQueue", true, true, {}},
      {g, version, "workloads", "Workload", true, true, wl},
      {g, version, "provisioningrequestconfigs", "ProvisioningRequestConfig", false, false, prc},
      {g, version, "admissionchecks", "AdmissionCheck", false, true, ac},
  };
}

std::vector<ResourceType> KueueReleaseTypes(const std::string& release) {
  int minor = -1;
  if (release.rfind("v0.", 0) == 0) {
    try {
      minor = std::stoi(release.substr(3));
    } catch (...) {
      minor = -1;
    }
  }
  if (minor < 9) return {};
  auto without_cohorts = [](std::vector<ResourceType> types) {
    std::erase_if(types, [](const ResourceType& t) { return t.resource == "cohorts"; });
    return types;
  };
  auto only_cohorts = [](std::vector<ResourceType> types) {
    std::erase_if(types, [](const ResourceType& t) { return t.resource != "cohorts"; });
    return types;
  };
  std::vector<ResourceType> out;
  auto add = [&out](std::vector<ResourceType> types) {
    for (auto& t : types) out.push_back(std::move(t));
  };
  if (minor <= 12) {
    add(without_cohorts(KueueTypes("v1beta1")));
    add(only_cohorts(KueueTypes("v1alpha1")));
  } else if (minor <= 14) {
    add(KueueTypes("v1beta1"));
  } else if (minor <= 16) {
    add(KueueTypes("v1beta2"));
    add(KueueTypes("v1beta1"));
  } else {
    add(KueueTypes("v1beta2"));
  }
  return out;
}

std::vector<ResourceType> ProvisioningRequestTypes() {
  // cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1:
  // status.conditions listType=map keyed by type; status subresource.
  ListTypes pr;
  pr.map_keys["status.conditions"] = {"type"};
  return {{"autoscaling.x-k8s.io", "v1", "provisioningrequests", "ProvisioningRequest", true, true, pr}};
}

std::vector<ResourceType> JobSetTypes() {
  return {{"jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", true, true, {}}};
}

}  // namespace tpu::kubesim
