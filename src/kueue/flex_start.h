// DWS flex-start through Kueue, as pure data: which flavors have flex-start
// pools, and the objects that make Kueue ask the Dynamic Workload Scheduler
// for their nodes — a ProvisioningRequestConfig (queued-provisioning.gke.io,
// managing google.com/tpu) and an AdmissionCheck of Kueue's provisioning
// controller pointing at it, attached to the ClusterQueue for those flavors
// only. No I/O: FlexStartSync (flex_start_sync.h) reads and writes them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/resource.h"
#include "kueue/config.h"
#include "manifest/types.h"

namespace tpu::kueue {

// Our objects' names (one config and one check per Kubernetes cluster: the
// daemon keeps one Kueue target).
inline constexpr const char* kFlexStartCheck = "tpu-provisioner-flex-start";
inline constexpr const char* kFlexStartConfig = "tpu-provisioner-flex-start";
// GKE's provisioning class for flex-start with queued provisioning.
inline constexpr const char* kQueuedProvisioningClass = "queued-provisioning.gke.io";
// The controller name of Kueue's provisioning admission check controller.
inline constexpr const char* kProvisioningController = "kueue.x-k8s.io/provisioning-request";
// The Node label GKE sets to the resize request a booking made; the value is
// the ProvisioningRequest's status.provisioningClassDetails.ResizeRequestName.
inline constexpr const char* kProvisioningRequestNodeLabel = "autoscaling.gke.io/provisioning-request";
// The ClusterQueue's admission check rule has its own field manager: an apply
// under the quota's manager without spec.resourceGroups would drop the quota.
inline constexpr const char* kFlexStartFieldManager = "tpu-provisioner-flex-start";

// The flavors (sorted, unique) that hold a flex-start pool of `target`.
std::vector<std::string> FlexStartFlavors(const manifest::Target& target, const KueueConfig& config);

// The objects we apply, at the version of `ref`.
nlohmann::json ProvisioningRequestConfigObject(const kube::ResourceRef& ref, const KueueConfig& config);
nlohmann::json AdmissionCheckObject(const kube::ResourceRef& ref);

// Our rule of spec.admissionChecksStrategy.admissionChecks: our check on `flavors`.
nlohmann::json FlexStartRule(const std::vector<std::string>& flavors);

// `current` rules with ours set to FlexStartRule(flavors), or removed when
// `flavors` is empty; every other rule kept in place. For v1beta1, whose list
// is atomic: the whole list is written, so it must carry everyone's rules.
nlohmann::json MergeCheckRules(const nlohmann::json& current, const std::vector<std::string>& flavors);

// True when `obj` carries our managed-by label (we made it, we may delete it).
bool ManagedByUs(const nlohmann::json& obj);

}  // namespace tpu::kueue
