// JSON of the cloud resource types as they appear inside a plan document
// (docs/plan-json.md, "Resource bodies"). This is the plan's own spelling, flat
// and camelCase, not the GKE/Compute wire format (that is src/cloud's job).
// Optional fields are omitted when unset, so "not said" survives a round trip.
// The readers throw nlohmann::json::exception on a malformed body; PlanFromJson
// turns that into a Status.
#pragma once

#include <nlohmann/json.hpp>

#include "cloud/types.h"

namespace tpu::plan {

nlohmann::json NodePoolToJson(const cloud::NodePool& p);
cloud::NodePool NodePoolFromJson(const nlohmann::json& j);
nlohmann::json WorkloadPolicyToJson(const cloud::WorkloadPolicy& p);
cloud::WorkloadPolicy WorkloadPolicyFromJson(const nlohmann::json& j);
nlohmann::json InstanceTemplateToJson(const cloud::InstanceTemplate& t);
cloud::InstanceTemplate InstanceTemplateFromJson(const nlohmann::json& j);
nlohmann::json InstanceGroupManagerToJson(const cloud::InstanceGroupManager& g);
cloud::InstanceGroupManager InstanceGroupManagerFromJson(const nlohmann::json& j);

}  // namespace tpu::plan
