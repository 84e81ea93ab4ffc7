// GKE cluster and operation routes, and the dispatch of /v1/ paths:
//   GET/POST   /v1/projects/P/locations/L/clusters        (L may be "-" to list;
//              a create makes the cluster's initial node pools too)
//   GET/DELETE /v1/projects/P/locations/L/clusters/C
//   GET        /v1/projects/P/locations/L/operations      (L may be "-")
//   GET        /v1/projects/P/locations/L/operations/O
// Node pool routes are in gke_node_pools.cc.
#include <cstdio>
#include <variant>
#include <vector>

#include "sim/api_schema.h"
#include "sim/cloud_errors.h"
#include "sim/cloud_operations.h"
#include "sim/gke_concurrency.h"
#include "sim/gke_instance_groups.h"
#include "sim/gke_pool_rules.h"
#include "sim/gke_routes.h"

namespace tpu::sim {

std::string RegionOf(const std::string& zone) {
  if (!IsZone(zone)) return zone;
  return zone.substr(0, zone.rfind('-'));
}

bool IsZone(const std::string& location) {
  int dashes = 0;
  for (char c : location) dashes += c == '-';
  return dashes >= 2;
}

namespace {

std::string ClusterSelfLink(const std::string& p, const std::string& l, const std::string& c) {
  return "https://container.googleapis.com/v1/projects/" + p + "/locations/" + l + "/clusters/" + c;
}

json NewClusterWire(SimContext& ctx, const std::string& project, const std::string& location,
                    const std::string& name, const json& request) {
  json c = json::object();
  char id[40];
  std::snprintf(id, sizeof id, "%016llx%016llx", static_cast<unsigned long long>(ctx.rng()),
                static_cast<unsigned long long>(ctx.rng()));
  c["name"] = name;
  if (request.contains("description")) c["description"] = request["description"];
  c["network"] = request.value("network", "default");
  c["subnetwork"] = request.value("subnetwork", "default");
  json locations = request.value("locations", json::array());
  if (locations.empty()) {
    if (IsZone(location)) locations.push_back(location);
    else for (const char* z : {"-a", "-b", "-c"}) locations.push_back(location + z);
  }
  c["locations"] = locations;
  c["selfLink"] = ClusterSelfLink(project, location, name);
  c["zone"] = location;
  c["location"] = location;
  c["endpoint"] = "10.0.0.2";
  c["initialClusterVersion"] = kGkeVersion;
  c["currentMasterVersion"] = kGkeVersion;
  c["currentNodeVersion"] = kGkeVersion;
  c["createTime"] = Rfc3339(ctx.now_ms);
  c["status"] = "PROVISIONING";
  c["id"] = id;
  // New clusters are enrolled in a release channel unless the request says
  // otherwise; a cluster without one reports an empty releaseChannel.
  std::string channel = ctx.release_channel;
  if (request.contains("releaseChannel"))
    channel = request["releaseChannel"].value("channel", "");
  c["releaseChannel"] = json::object();
  if (!channel.empty() && channel != "UNSPECIFIED") c["releaseChannel"]["channel"] = channel;
  if (request.contains("resourceLabels")) c["resourceLabels"] = request["resourceLabels"];
  return c;
}

std::string ClusterPath(const std::string& p, const std::string& l, const std::string& c) {
  return "projects/" + p + "/locations/" + l + "/clusters/" + c;
}

SimResponse ListClusters(SimContext& ctx, const std::string& project, const std::string& location) {
  json clusters = json::array();
  for (const auto& [key, c] : ctx.state.clusters) {
    if (key.rfind(project + "/", 0) != 0) continue;
    if (location != "-" && c.value("location", "") != location) continue;
    clusters.push_back(ClusterWithPools(ctx.state, key));
  }
  SimResponse r;
  if (!clusters.empty()) r.body["clusters"] = clusters;
  return r;
}

// The node pools a cluster is created with: `nodePools`, or the deprecated
// `initialNodeCount` (+ `nodeConfig`) as one pool named "default-pool", never
// both (Cluster's comments in cluster_service.proto). A Standard cluster
// needs at least one node.
std::variant<json, ApiError> InitialPools(const json& cluster) {
  const bool listed = cluster.contains("nodePools") && !cluster["nodePools"].empty();
  const int count = cluster.value("initialNodeCount", 0);
  if (listed && (count > 0 || cluster.contains("nodeConfig")))
    return BadRequest("Cluster.initial_node_count and Cluster.node_config must not be set when "
                      "Cluster.node_pools is specified.");
  if (listed) return cluster["nodePools"];
  const bool autopilot = cluster.value("autopilot", json::object()).value("enabled", false);
  if (count <= 0) {
    if (autopilot) return json::array();
    return BadRequest("Cluster.initial_node_count must be greater than zero.");
  }
  json pool = {{"name", "default-pool"}, {"initialNodeCount", count}};
  if (cluster.contains("nodeConfig")) pool["config"] = cluster["nodeConfig"];
  return json::array({pool});
}

SimResponse CreateCluster(SimContext& ctx, const SimRequest& req, const std::string& project,
                          const std::string& location) {
  if (auto err = ApiSchema::Builtin().Validate(req.parsed, "google.container.v1.CreateClusterRequest", ""))
    return ErrorResponse(BadRequest(*err));
  const json cluster = req.parsed.value("cluster", json::object());
  const std::string name = cluster.value("name", "");
  if (name.empty()) return ErrorResponse(BadRequest("Cluster.name must be specified."));
  if (location == "-") return ErrorResponse(BadRequest("Location \"-\" is not valid for create."));
  const std::string key = project + "/" + location + "/" + name;
  if (ctx.state.clusters.count(key))
    return ErrorResponse(AlreadyExists("Already exists: " + ClusterPath(project, location, name) + "."));
  auto initial = InitialPools(cluster);
  if (auto* e = std::get_if<ApiError>(&initial)) return ErrorResponse(*e);
  json wire = NewClusterWire(ctx, project, location, name, cluster);
  // Every pool passes the rules a nodePools.create would apply, or none is made.
  std::vector<PreparedPool> pools;
  for (const json& np : std::get<json>(initial)) {
    PoolPath p{project, location, name, np.value("name", ""), ""};
    for (const auto& other : pools)
      if (other.record.wire.value("name", "") == p.pool)
        return ErrorResponse(BadRequest("Node pool \"" + p.pool + "\" is specified more than once."));
    auto prepared = PreparePool(ctx, p, np, wire);
    if (auto* e = std::get_if<ApiError>(&prepared)) return ErrorResponse(*e);
    pools.push_back(std::move(std::get<PreparedPool>(prepared)));
  }
  wire.erase("nodePools");
  json error;
  for (auto& pp : pools) {
    const std::string pool = pp.record.wire.value("name", "");
    if (error.is_null())
      error = AcquirePoolChips(ctx.state, pp.record, pp.chips,
                               "Failed to create node pool \"" + pool + "\": ");
    ctx.state.pools[key + "/" + pool] = pp.record;
    CreatePoolInstanceGroups(ctx.state, pp.record, ctx.now_ms);
  }
  ctx.state.clusters[key] = wire;
  GkeOpSpec spec{project, location, key, "CREATE_CLUSTER", ClusterSelfLink(project, location, name),
                 OpEffect::kCreateCluster, key, error};
  SimResponse r;
  r.body = StartGkeOperation(ctx, spec).wire;
  return r;
}

SimResponse ClusterRoute(SimContext& ctx, const SimRequest& req, const std::string& project,
                         const std::string& location, const std::string& name) {
  const std::string key = project + "/" + location + "/" + name;
  auto it = ctx.state.clusters.find(key);
  if (it == ctx.state.clusters.end())
    return ErrorResponse(NotFound("Not found: " + ClusterPath(project, location, name) + "."));
  if (req.method == "GET") {
    SimResponse r;
    r.body = ClusterWithPools(ctx.state, key);
    return r;
  }
  if (req.method == "DELETE") {
    if (auto busy = RefuseClusterOperation(ctx.state, key)) return ErrorResponse(*busy);
    it->second["status"] = "STOPPING";
    GkeOpSpec spec{project, location, key, "DELETE_CLUSTER", ClusterSelfLink(project, location, name),
                   OpEffect::kDeleteCluster, key, nullptr};
    SimResponse r;
    r.body = StartGkeOperation(ctx, spec).wire;
    return r;
  }
  return ErrorResponse(NotFound("Method not found."));
}

SimResponse Operations(SimContext& ctx, const SimRequest& req, const std::string& project,
                       const std::string& location) {
  if (req.segments.size() == 6) {
    json ops = json::array();
    // Keys are "P/name": the project's operations are one run of the map.
    const std::string prefix = project + "/";
    for (auto it = ctx.state.gke_ops.lower_bound(prefix);
         it != ctx.state.gke_ops.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      const OpRecord& op = it->second;
      if (location != "-" && op.wire.value("location", "") != location) continue;
      ops.push_back(op.wire);
    }
    SimResponse r;
    if (!ops.empty()) r.body["operations"] = ops;
    return r;
  }
  const std::string& name = req.segments[6];
  auto it = ctx.state.gke_ops.find(project + "/" + name);
  if (it == ctx.state.gke_ops.end() ||
      (location != "-" && it->second.wire.value("location", "") != location)) {
    return ErrorResponse(NotFound("Not found: projects/" + project + "/locations/" + location +
                                  "/operations/" + name + "."));
  }
  SimResponse r;
  r.body = it->second.wire;
  return r;
}

}  // namespace

json ClusterWithPools(const CloudState& state, const std::string& cluster_key) {
  json c = state.clusters.at(cluster_key);
  json pools = json::array();
  const std::string prefix = cluster_key + "/";
  for (auto it = state.pools.lower_bound(prefix);
       it != state.pools.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    pools.push_back(it->second.wire);
  }
  if (!pools.empty()) c["nodePools"] = pools;
  return c;
}

void EnsureGkeCluster(SimContext& ctx, const std::string& project, const std::string& location,
                      const std::string& name, const json& cluster) {
  const std::string key = project + "/" + location + "/" + name;
  if (ctx.state.clusters.count(key)) return;
  json c = NewClusterWire(ctx, project, location, name, cluster);
  c["status"] = "RUNNING";
  ctx.state.clusters[key] = c;
  ctx.changed = true;
}

SimResponse HandleGke(SimContext& ctx, const SimRequest& req) {
  const auto& s = req.segments;  // v1 projects P locations L …
  if (s.size() < 6 || s[1] != "projects" || s[3] != "locations")
    return ErrorResponse(NotFound("The requested URL " + req.path + " was not found."));
  const std::string& project = s[2];
  const std::string& location = s[4];
  if (s[5] == "operations" && s.size() <= 7 && req.method == "GET")
    return Operations(ctx, req, project, location);
  if (s[5] != "clusters")
    return ErrorResponse(NotFound("The requested URL " + req.path + " was not found."));
  if (s.size() == 6) {
    if (req.method == "GET") return ListClusters(ctx, project, location);
    if (req.method == "POST") return CreateCluster(ctx, req, project, location);
  } else if (s.size() == 7) {
    return ClusterRoute(ctx, req, project, location, s[6]);
  } else if (s[7] == "nodePools" && s.size() <= 9) {
    if (location == "-")
      return ErrorResponse(BadRequest("Location \"-\" is only valid when listing clusters."));
    return HandleGkeNodePools(ctx, req);
  }
  return ErrorResponse(NotFound("The requested URL " + req.path + " was not found."));
}

}  // namespace tpu::sim
