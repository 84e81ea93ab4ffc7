// Kueue API version discovery, per resource.
#include "kueue/versions.h"

#include <algorithm>

namespace tpu::kueue {
namespace {

constexpr const char* kGroup = "kueue.x-k8s.io";

std::string Join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

}  // namespace

std::vector<std::string> KueueResourcesNeeded(const KueueConfig& config) {
  std::vector<std::string> out = {"resourceflavors", "clusterqueues", "workloads"};
  if (config.cohort_mode()) out.push_back("cohorts");
  return out;
}

Result<KueueVersions> DiscoverKueue(kube::KubeClient& client, const KueueConfig& config) {
  auto served = client.ServedVersions(kGroup);
  if (!served.ok()) return served.status().WithContext("Kueue discovery");
  if (served->empty())
    return Status::FailedPrecondition("Kueue is not installed: kueue.x-k8s.io v1beta2 and v1beta1 are not served");
  std::vector<std::string> spoken = KueueVersionsSpoken();
  if (!config.api_version.empty()) {
    if (std::find(served->begin(), served->end(), config.api_version) == served->end())
      return Status::FailedPrecondition("Kueue " + config.api_version +
                                        " is not served by this cluster (spec.kueue.apiVersion); served: " +
                                        Join(*served, ", "));
    spoken = {config.api_version};
  }
  // Every served version's resources, so a refusal can say where a kind is.
  std::map<std::string, std::vector<std::string>> resources;
  for (const auto& v : *served) {
    auto r = client.ServedResources(kGroup, v);
    if (!r.ok()) return r.status().WithContext("Kueue discovery: " + std::string(kGroup) + "/" + v);
    resources[v] = std::move(*r);
  }
  auto serves = [&](const std::string& version, const std::string& resource) {
    auto it = resources.find(version);
    return it != resources.end() && std::find(it->second.begin(), it->second.end(), resource) != it->second.end();
  };
  KueueVersions out;
  for (const auto& resource : KueueResourcesNeeded(config)) {
    for (const auto& v : spoken) {
      if (serves(v, resource)) {
        out.by_resource[resource] = v;
        break;
      }
    }
    if (out.by_resource.count(resource)) continue;
    std::vector<std::string> elsewhere;
    for (const auto& v : *served)
      if (serves(v, resource)) elsewhere.push_back(std::string(kGroup) + "/" + v);
    std::string message = "Kueue " + resource + " is not served in " + Join(spoken, " or ") +
                          (elsewhere.empty() ? std::string(" (nor in any other version)")
                                             : "; this cluster serves it only as " + Join(elsewhere, ", "));
    if (resource == "cohorts")
      message += ". Cohort objects need Kueue v0.13 or later (Cohort v1beta1); upgrade Kueue, or put the "
                 "quota in a ClusterQueue (spec.kueue.clusterQueue)";
    return Status::FailedPrecondition(message);
  }
  return out;
}

Result<kube::ResourceRef> DiscoverKueueResource(kube::KubeClient& client, const kube::ResourceRef& base) {
  for (const auto& v : KueueVersionsSpoken()) {
    auto r = client.ServedResources(kGroup, v);
    if (!r.ok()) return r.status().WithContext("Kueue discovery");
    if (std::find(r->begin(), r->end(), base.resource) != r->end()) return base.AtVersion(v);
  }
  return Status::FailedPrecondition("Kueue " + base.resource + " is not served in " +
                                    Join(KueueVersionsSpoken(), " or "));
}

}  // namespace tpu::kueue
