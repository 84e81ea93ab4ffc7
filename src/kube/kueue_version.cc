// Kueue API version discovery.
#include "kube/kueue_version.h"

#include <algorithm>

namespace tpu::kube {

Result<std::string> ChooseKueueVersion(KubeClient& client, const KueueConfig& config) {
  auto served = client.ServedVersions("kueue.x-k8s.io");
  if (!served.ok()) return served.status().WithContext("Kueue discovery");
  auto has = [&](const std::string& v) {
    return std::find(served->begin(), served->end(), v) != served->end();
  };
  if (!config.api_version.empty()) {
    if (has(config.api_version)) return config.api_version;
    return Status::FailedPrecondition("Kueue " + config.api_version +
                                      " is not served by this cluster (spec.kueue.apiVersion)");
  }
  for (const char* v : {"v1beta2", "v1beta1"}) {
    if (has(v)) return std::string(v);
  }
  return Status::FailedPrecondition("Kueue is not installed: kueue.x-k8s.io v1beta2 and v1beta1 are not served");
}

}  // namespace tpu::kube
