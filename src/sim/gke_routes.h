// GKE (container.googleapis.com/v1) routes of the emulator: clusters, node
// pools and operations under /v1/projects/P/locations/L/…. Each handler reads
// and changes the locked state through a SimContext and answers with the body
// and status the real API sends.
#pragma once

#include <string>

#include "sim/cloud_context.h"
#include "sim/sim_http.h"

namespace tpu::sim {

// Dispatches a request whose path starts with /v1/.
SimResponse HandleGke(SimContext& ctx, const SimRequest& req);

// Node pool routes: segments are v1 projects P locations L clusters C nodePools [N[:verb]].
SimResponse HandleGkeNodePools(SimContext& ctx, const SimRequest& req);

// A RUNNING cluster with no node pools, unless it already exists. For callers
// that need a project to already have its clusters (--cloud sim, tests).
// `cluster` may name its release channel ({"releaseChannel":{"channel":…}});
// else it gets the emulator's default.
void EnsureGkeCluster(SimContext& ctx, const std::string& project, const std::string& location,
                      const std::string& name, const json& cluster = json::object());

// The cluster as the API returns it, with its node pools embedded.
json ClusterWithPools(const CloudState& state, const std::string& cluster_key);

// A zone's region: "us-central1-a" → "us-central1".
std::string RegionOf(const std::string& zone);
// Whether a location names a zone (three dash-separated parts) rather than a region.
bool IsZone(const std::string& location);

constexpr const char* kGkeVersion = "1.32.2-gke.1297002";

}  // namespace tpu::sim
