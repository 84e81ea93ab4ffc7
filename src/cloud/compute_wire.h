// Compute v1 JSON ↔ the types of types.h (field names from compute.proto's
// JSON mapping). int64 fields arrive as strings ("diskSizeGb": "100") and are
// accepted as numbers too.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "cloud/types.h"

namespace tpu::cloud {

// ResourcePolicy with a workloadPolicy {type, acceleratorTopology}.
nlohmann::json WorkloadPolicyToJson(const WorkloadPolicy& p);
Result<WorkloadPolicy> WorkloadPolicyFromJson(const nlohmann::json& j);
bool IsWorkloadPolicyJson(const nlohmann::json& j);

// InstanceTemplate with properties {machineType, scheduling, reservationAffinity,
// disks[boot], networkInterfaces, serviceAccounts, tags, metadata, resourcePolicies}.
nlohmann::json InstanceTemplateToJson(const InstanceTemplate& t);
Result<InstanceTemplate> InstanceTemplateFromJson(const nlohmann::json& j);

// InstanceGroupManager {instanceTemplate, baseInstanceName, targetSize,
// targetSizePolicy{mode}, status{isStable}, currentActions (read only)}.
nlohmann::json InstanceGroupManagerToJson(const InstanceGroupManager& m);
Result<InstanceGroupManager> InstanceGroupManagerFromJson(const nlohmann::json& j);

// ManagedInstance {name, instance, instanceStatus, currentAction,
// lastAttempt.errors.errors[] → "CODE: message"}.
Result<ManagedInstance> ManagedInstanceFromJson(const nlohmann::json& j);
// compute#instance {name, zone (URL → name), status, metadata {fingerprint, items}}.
Result<Instance> InstanceFromJson(const nlohmann::json& j);
// The Metadata body of instances.setMetadata: {fingerprint, items:[{key,value}]}.
nlohmann::json InstanceMetadataToJson(const std::string& fingerprint,
                                      const std::vector<std::pair<std::string, std::string>>& items);

// compute#reservation {name, zone (URL → name), selfLink (→ project), status,
// specificReservationRequired, specificReservation {count, inUseCount,
// instanceProperties.machineType}, shareSettings {shareType, projectMap},
// deploymentType, resourceStatus.reservationBlockCount}. `project` is the
// owner when the selfLink does not say.
Result<Reservation> ReservationFromJson(const nlohmann::json& j, const std::string& project = "");

// compute#operation. scope/location from the zone or region URL (global otherwise);
// error_code = httpErrorStatusCode, error_reason/message from error.errors[0].
Result<Operation> ComputeOperationFromJson(const nlohmann::json& j, const std::string& project = "");
nlohmann::json ComputeOperationToJson(const Operation& op);

// The last path segment of a URL ("…/zones/us-central1-a" → "us-central1-a").
std::string LastSegment(const std::string& url);
// The segment after `key` in a URL path ("…/projects/p/zones/z", "projects" → "p").
std::string SegmentAfter(const std::string& url, const std::string& key);
// An operation's scope and location from its `zone` or `region` URL (neither:
// global), and its project (`project`, else its selfLink's).
void SetOperationScope(const std::string& zone, const std::string& region, const std::string& project,
                       Operation* op);

}  // namespace tpu::cloud
