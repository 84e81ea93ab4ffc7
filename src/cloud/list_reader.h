// The list responses a refresh reads (docs/architecture.md, "Reading live
// state"), parsed straight from the body into the types of types.h with
// simdjson's on-demand API: one pass over the text, no JSON tree. The fields,
// defaults and errors are those of gke_wire.h and compute_wire.h, which stay
// the readers of everything else (single GETs, operations, mutations' answers)
// and the reference list_reader_test.cc compares these against.
//
// Unknown fields are skipped without being validated; a body that is not JSON
// fails with "response is not JSON"; an empty body reads as an empty list.
// Each function pads `body` in place (its capacity grows by SIMDJSON_PADDING).
// Thread-safe: every call has its own parser.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "cloud/types.h"

namespace tpu::cloud {

// GKE ListClustersResponse, as ClusterListFromJson reads it (missing zones are
// an Unavailable error).
Result<std::vector<Cluster>> ReadClusterList(std::string& body, const std::string& project);

// GKE ListOperationsResponse, as GkeOperationListFromJson reads it.
Result<std::vector<Operation>> ReadGkeOperationList(std::string& body, const std::string& project);

// What a page of a Compute aggregated list says besides its items.
struct AggregatedPage {
  std::string next_page_token;  // "" on the last page
  std::string unreachables;     // the non-empty `unreachables` array as compact JSON, else ""
};

// One page of aggregated/<collection>, appending each scope's items to `out`
// in the order ComputeClient has always returned them (scopes by name), with
// what the scope key tells filled in (a policy's region, a group's or a
// reservation's zone, an operation's scope). Resource policies that are not
// workload policies are skipped; with `only_running`, operations that are DONE.
Result<AggregatedPage> ReadWorkloadPolicyPage(std::string& body, std::vector<WorkloadPolicy>* out);
Result<AggregatedPage> ReadInstanceTemplatePage(std::string& body, std::vector<InstanceTemplate>* out);
Result<AggregatedPage> ReadInstanceGroupManagerPage(std::string& body, std::vector<InstanceGroupManager>* out);
Result<AggregatedPage> ReadReservationPage(std::string& body, const std::string& project,
                                           std::vector<Reservation>* out);
Result<AggregatedPage> ReadComputeOperationPage(std::string& body, const std::string& project, bool only_running,
                                                std::vector<Operation>* out);
// One page of a scope's own operations list ({zones/Z,regions/R,global}/operations,
// `scope` as in that path), read as ReadComputeOperationPage reads an item.
Result<AggregatedPage> ReadScopeOperationPage(std::string& body, const std::string& project, const std::string& scope,
                                              bool only_running, std::vector<Operation>* out);

}  // namespace tpu::cloud
