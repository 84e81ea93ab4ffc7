// Compute Engine (compute.googleapis.com/compute/v1) routes of the emulator:
// regional resourcePolicies (workload policies), global instanceTemplates,
// zonal instanceGroupManagers (+ resize, listManagedInstances) and their
// instances, their lists and aggregated lists with paging, and
// zone/region/global operations. Handlers read and change the
// locked state through a SimContext.
#pragma once

#include <optional>
#include <string>

#include "sim/cloud_context.h"
#include "sim/cloud_errors.h"
#include "sim/sim_http.h"

namespace tpu::sim {

// Dispatches a request whose path starts with /compute/v1/.
SimResponse HandleCompute(SimContext& ctx, const SimRequest& req);

// Lists and aggregated lists (compute_lists.cc).
SimResponse ComputeList(SimContext& ctx, const SimRequest& req, const std::string& project,
                        const std::string& scope, const std::string& collection);
SimResponse ComputeAggregatedList(SimContext& ctx, const SimRequest& req, const std::string& project,
                                  const std::string& collection);

// Compute's paging: at most `maxResults` (default and cap 500) from
// `pageToken` on, with the next token while more remain (compute_lists.cc).
struct ComputePage {
  size_t begin = 0, end = 0;
  std::string next;
};
std::optional<ApiError> ComputePaginate(const SimRequest& req, size_t total, ComputePage* page);

// zones/Z/instances/N[/setMetadata]: GET, DELETE, POST setMetadata
// (compute_instance_routes.cc). `verb` is "" or "setMetadata".
SimResponse HandleInstance(SimContext& ctx, const SimRequest& req, const std::string& project,
                           const std::string& scope, const std::string& name, const std::string& verb);
// POST zones/Z/instanceGroupManagers/N/listManagedInstances.
SimResponse ListManagedInstances(SimContext& ctx, const SimRequest& req, const std::string& mig_key,
                                 const json& mig);

// The state key of the operation a …/operations/O[/wait] path names, or "".
std::string ComputeOperationKey(const SimRequest& req);

// "https://www.googleapis.com/compute/v1/" + path.
std::string ComputeUrl(const std::string& path);

}  // namespace tpu::sim
