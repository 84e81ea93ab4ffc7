// Which Kueue API version to speak: v1beta2 when the server serves it, else
// v1beta1 (older Kueue), unless the config pins one. The two differ for us in
// one field: a ClusterQueue's cohort is spec.cohortName in v1beta2 and
// spec.cohort in v1beta1.
#pragma once

#include <string>

#include "kube/client.h"
#include "kube/kueue_config.h"

namespace tpu::kube {

Result<std::string> ChooseKueueVersion(KubeClient& client, const KueueConfig& config);

// The ClusterQueue field that names its cohort at `version`.
inline const char* CohortField(const std::string& version) {
  return version == "v1beta1" ? "cohort" : "cohortName";
}

}  // namespace tpu::kube
