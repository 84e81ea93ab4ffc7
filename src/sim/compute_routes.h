// Compute Engine (compute.googleapis.com/compute/v1) routes of the emulator:
// regional resourcePolicies (workload policies), global instanceTemplates,
// zonal instanceGroupManagers (+ resize), their lists and aggregated lists
// with paging, and zone/region/global operations. Handlers read and change the
// locked state through a SimContext.
#pragma once

#include <string>

#include "sim/cloud_context.h"
#include "sim/sim_http.h"

namespace tpu::sim {

// Dispatches a request whose path starts with /compute/v1/.
SimResponse HandleCompute(SimContext& ctx, const SimRequest& req);

// Lists and aggregated lists (compute_lists.cc).
SimResponse ComputeList(SimContext& ctx, const SimRequest& req, const std::string& project,
                        const std::string& scope, const std::string& collection);
SimResponse ComputeAggregatedList(SimContext& ctx, const SimRequest& req, const std::string& project,
                                  const std::string& collection);

// The state key of the operation a …/operations/O[/wait] path names, or "".
std::string ComputeOperationKey(const SimRequest& req);

// "https://www.googleapis.com/compute/v1/" + path.
std::string ComputeUrl(const std::string& path);

}  // namespace tpu::sim
