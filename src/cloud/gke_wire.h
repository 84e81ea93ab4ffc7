// GKE container/v1 JSON ↔ the types of types.h. Field names follow
// cluster_service.proto's JSON mapping (lowerCamelCase). Parsing is lenient
// about absent fields (live objects omit defaults) and strict about wrong types.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "cloud/types.h"

namespace tpu::cloud {

// The NodePool message (what create sends inside {"nodePool": …}).
nlohmann::json NodePoolToJson(const NodePool& pool);
Result<NodePool> NodePoolFromJson(const nlohmann::json& j);

// Request bodies.
nlohmann::json CreateNodePoolBody(const NodePool& pool);          // {"nodePool": {...}}
nlohmann::json UpdateNodePoolBody(const NodePoolUpdate& update);  // wrapper objects
nlohmann::json SetNodePoolSizeBody(int node_count);              // {"nodeCount": n}
nlohmann::json SetNodePoolAutoscalingBody(const NodePoolAutoscaling& a);  // {"autoscaling": {...}}
nlohmann::json SetNodePoolManagementBody(const NodeManagement& m);        // {"management": {...}}

// A Cluster message; `project` is taken from selfLink when empty.
Result<Cluster> ClusterFromJson(const nlohmann::json& j, const std::string& project = "");
// ListClustersResponse {"clusters": [...], "missingZones": [...]}.
// Missing zones are an error: a partial list would read as deleted pools.
Result<std::vector<Cluster>> ClusterListFromJson(const nlohmann::json& j, const std::string& project);

// Operation message. `project` and `location` are parsed from selfLink/name when
// present; targetLink kept verbatim. The error reason comes from
// nodepoolConditions[].code / error.details[].reason, or a known stockout word
// in the message.
Result<Operation> GkeOperationFromJson(const nlohmann::json& j, const std::string& project = "");
// The stockout or quota word a failure's text names (GCE_STOCKOUT, …), or "".
std::string KnownFailureReason(const std::string& text);
nlohmann::json GkeOperationToJson(const Operation& op);
// ListOperationsResponse {"operations": [...]}.
Result<std::vector<Operation>> GkeOperationListFromJson(const nlohmann::json& j,
                                                        const std::string& project);

}  // namespace tpu::cloud
