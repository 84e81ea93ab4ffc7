// Which Kueue API version to speak, per resource. Kueue does not move all its
// kinds at once: Cohort was v1alpha1 only until v0.13 made it v1beta1, while
// ClusterQueue and ResourceFlavor were already v1beta1; v0.15 added v1beta2
// for every kind. So each resource we use gets the best version we speak
// that the server serves for it (v1beta2, else v1beta1, unless the config
// pins one), read from the group version's resource list
// (/apis/kueue.x-k8s.io/<version>). A resource we need that is served in no
// version we speak is refused with a message saying what is served instead.
//
// The versions differ for us in one field: a ClusterQueue's cohort is
// spec.cohortName in v1beta2 and spec.cohort in v1beta1.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kube/client.h"
#include "kueue/config.h"

namespace tpu::kueue {

// The versions this tool writes Kueue objects in, best first.
inline const std::vector<std::string>& KueueVersionsSpoken() {
  static const std::vector<std::string> v = {"v1beta2", "v1beta1"};
  return v;
}

struct KueueVersions {
  std::map<std::string, std::string> by_resource;  // "cohorts" -> "v1beta1"

  // `base` at the version chosen for its resource. REQUIRES: discovered.
  kube::ResourceRef Ref(const kube::ResourceRef& base) const { return base.AtVersion(by_resource.at(base.resource)); }
};

// The resources `config` needs: resourceflavors, clusterqueues, workloads,
// and cohorts in cohort mode.
std::vector<std::string> KueueResourcesNeeded(const KueueConfig& config);

Result<KueueVersions> DiscoverKueue(kube::KubeClient& client, const KueueConfig& config);

// `base` (a Kueue kind) at the best version we speak that serves it;
// FailedPrecondition when none does (Kueue not installed, or too old).
Result<kube::ResourceRef> DiscoverKueueResource(kube::KubeClient& client, const kube::ResourceRef& base);

// The ClusterQueue field that names its cohort at `version`.
inline const char* CohortField(const std::string& version) {
  return version == "v1beta1" ? "cohort" : "cohortName";
}

}  // namespace tpu::kueue
