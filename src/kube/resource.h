// Names a kind of Kubernetes object the way the REST API does: group, version,
// plural resource and scope. Builds request paths.
#pragma once

#include <string>

namespace tpu::kube {

struct ResourceRef {
  std::string group;  // "" for core
  std::string version;
  std::string resource;
  std::string kind;
  bool namespaced = false;

  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
  // "/api/v1/namespaces/<ns>/pods/<name>/<subresource>"; parts left empty are
  // left out (an empty ns on a namespaced resource lists across namespaces).
  std::string Path(const std::string& ns = "", const std::string& name = "",
                   const std::string& subresource = "") const;
  ResourceRef AtVersion(const std::string& v) const {
    ResourceRef r = *this;
    r.version = v;
    return r;
  }
};

// The resources this project reads or writes.
namespace resources {
inline const ResourceRef kNodes{"", "v1", "nodes", "Node", false};
inline const ResourceRef kPods{"", "v1", "pods", "Pod", true};
inline const ResourceRef kEvents{"", "v1", "events", "Event", true};
inline const ResourceRef kSecrets{"", "v1", "secrets", "Secret", true};
inline const ResourceRef kConfigMaps{"", "v1", "configmaps", "ConfigMap", true};
inline const ResourceRef kLeases{"coordination.k8s.io", "v1", "leases", "Lease", true};
inline const ResourceRef kJobSets{"jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", true};
// Kueue objects; the version is chosen by discovery (kueue_version.h).
inline const ResourceRef kResourceFlavors{"kueue.x-k8s.io", "v1beta2", "resourceflavors",
                                          "ResourceFlavor", false};
inline const ResourceRef kClusterQueues{"kueue.x-k8s.io", "v1beta2", "clusterqueues",
                                        "ClusterQueue", false};
inline const ResourceRef kCohorts{"kueue.x-k8s.io", "v1beta2", "cohorts", "Cohort", false};
inline const ResourceRef kWorkloads{"kueue.x-k8s.io", "v1beta2", "workloads", "Workload", true};
// DWS flex-start through Kueue (kueue/flex_start.h).
inline const ResourceRef kProvisioningRequestConfigs{"kueue.x-k8s.io", "v1beta2", "provisioningrequestconfigs",
                                                     "ProvisioningRequestConfig", false};
inline const ResourceRef kAdmissionChecks{"kueue.x-k8s.io", "v1beta2", "admissionchecks", "AdmissionCheck", false};
// The cluster autoscaler's, created by Kueue per workload in its namespace.
inline const ResourceRef kProvisioningRequests{"autoscaling.x-k8s.io", "v1", "provisioningrequests",
                                               "ProvisioningRequest", true};
}  // namespace resources

}  // namespace tpu::kube
