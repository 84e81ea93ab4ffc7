// Flex-start flavors and the Kueue objects for DWS; see flex_start.h.
#include "kueue/flex_start.h"

#include <algorithm>
#include <set>

#include "kube/client.h"
#include "kueue/quota.h"

namespace tpu::kueue {

std::vector<std::string> FlexStartFlavors(const manifest::Target& target, const KueueConfig& config) {
  std::set<std::string> flavors;
  for (const auto& pool : target.pools) {
    if (pool.capacity.type != manifest::CapacityType::kFlexStart || pool.slices <= 0) continue;
    flavors.insert(FlavorName(config, pool.accelerator, pool.shape.topology));
  }
  return {flavors.begin(), flavors.end()};
}

json ProvisioningRequestConfigObject(const kube::ResourceRef& ref, const KueueConfig& config) {
  // podSetUpdates as xpk and GKE's guide set them: the workload's pods are
  // pinned to the nodes of the booking Kueue's ProvisioningRequest made.
  return {{"apiVersion", ref.ApiVersion()},
          {"kind", "ProvisioningRequestConfig"},
          {"metadata", {{"name", kFlexStartConfig}, {"labels", {{"app.kubernetes.io/managed-by", kube::kFieldManager}}}}},
          {"spec",
           {{"provisioningClassName", kQueuedProvisioningClass},
            {"managedResources", {config.resource}},
            {"podSetUpdates",
             {{"nodeSelector",
               {{{"key", kProvisioningRequestNodeLabel}, {"valueFromProvisioningClassDetail", "ResizeRequestName"}}}}}}}}};
}

json AdmissionCheckObject(const kube::ResourceRef& ref) {
  json obj = {{"apiVersion", ref.ApiVersion()}, {"kind", "AdmissionCheck"}};
  obj["metadata"] = {{"name", kFlexStartCheck}, {"labels", {{"app.kubernetes.io/managed-by", kube::kFieldManager}}}};
  obj["spec"]["controllerName"] = kProvisioningController;
  obj["spec"]["parameters"] = {
      {"apiGroup", "kueue.x-k8s.io"}, {"kind", "ProvisioningRequestConfig"}, {"name", kFlexStartConfig}};
  return obj;
}

json FlexStartRule(const std::vector<std::string>& flavors) {
  return {{"name", kFlexStartCheck}, {"onFlavors", flavors}};
}

json MergeCheckRules(const json& current, const std::vector<std::string>& flavors) {
  json out = json::array();
  bool placed = false;
  for (const auto& rule : current.is_array() ? current : json::array()) {
    if (rule.value("name", "") != kFlexStartCheck) {
      out.push_back(rule);
      continue;
    }
    if (flavors.empty() || placed) continue;
    out.push_back(FlexStartRule(flavors));  // in place, so a re-sync changes nothing
    placed = true;
  }
  if (!flavors.empty() && !placed) out.push_back(FlexStartRule(flavors));
  return out;
}

bool ManagedByUs(const json& obj) {
  if (!obj.contains("metadata") || !obj["metadata"].contains("labels")) return false;
  return obj["metadata"]["labels"].value("app.kubernetes.io/managed-by", "") == kube::kFieldManager;
}

}  // namespace tpu::kueue
