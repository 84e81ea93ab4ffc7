// GKE node pool routes:
//   GET/POST   …/clusters/C/nodePools
//   GET/PUT/DELETE …/clusters/C/nodePools/N
//   POST       …/nodePools/N:setSize | :setAutoscaling | :setManagement
// with the real API's rules: one node-pool operation per cluster at a time,
// server-side defaults, TPU machine type vs topology, capacity (stockouts end
// the create operation with an error and leave the pool in ERROR), and
// multi-host TPU pools that cannot be resized.
#include <cctype>
#include <cstdio>
#include <optional>
#include <variant>

#include "sim/api_schema.h"
#include "sim/cloud_errors.h"
#include "sim/cloud_operations.h"
#include "sim/gke_instance_groups.h"
#include "sim/gke_routes.h"
#include "sim/tpu_shapes.h"

namespace tpu::sim {
namespace {

struct PoolPath {
  std::string project, location, cluster, pool, verb;
  std::string cluster_key() const { return project + "/" + location + "/" + cluster; }
  std::string pool_key() const { return cluster_key() + "/" + pool; }
  std::string resource() const {
    return "projects/" + project + "/locations/" + location + "/clusters/" + cluster +
           "/nodePools/" + pool;
  }
  std::string self_link() const { return "https://container.googleapis.com/v1/" + resource(); }
};

SimResponse Ok(json body) {
  SimResponse r;
  r.body = std::move(body);
  return r;
}

std::optional<SimResponse> BusyCluster(const CloudState& state, const std::string& cluster_key) {
  if (const OpRecord* op = RunningClusterOperation(state, cluster_key)) {
    return ErrorResponse(FailedPrecondition("Cluster is running incompatible operation " +
                                            op->wire["name"].get<std::string>() + "."));
  }
  return std::nullopt;
}

bool ValidPoolName(const std::string& n) {
  if (n.empty() || n.size() > 40 || !std::islower(static_cast<unsigned char>(n[0]))) return false;
  for (char c : n)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-'))
      return false;
  return n.back() != '-';
}

// Fields GKE fills in on a pool the request left them out of.
void FillDefaults(json& np, const PoolPath& p, const json& cluster, SimContext& ctx) {
  json& cfg = np["config"];
  if (!cfg.is_object()) cfg = json::object();
  if (!cfg.contains("machineType")) cfg["machineType"] = "e2-medium";
  if (!cfg.contains("diskSizeGb")) cfg["diskSizeGb"] = 100;
  if (!cfg.contains("diskType")) cfg["diskType"] = "pd-balanced";
  if (!cfg.contains("imageType")) cfg["imageType"] = "COS_CONTAINERD";
  if (!cfg.contains("serviceAccount")) cfg["serviceAccount"] = "default";
  if (!cfg.contains("oauthScopes")) {
    cfg["oauthScopes"] = {"https://www.googleapis.com/auth/devstorage.read_only",
                          "https://www.googleapis.com/auth/logging.write",
                          "https://www.googleapis.com/auth/monitoring",
                          "https://www.googleapis.com/auth/service.management.readonly",
                          "https://www.googleapis.com/auth/servicecontrol",
                          "https://www.googleapis.com/auth/trace.append"};
  }
  if (!cfg.contains("metadata")) cfg["metadata"] = json::object();
  cfg["metadata"]["disable-legacy-endpoints"] = "true";
  if (!cfg.contains("shieldedInstanceConfig"))
    cfg["shieldedInstanceConfig"] = {{"enableIntegrityMonitoring", true}};
  if (!np.contains("management")) np["management"] = json::object();
  if (!np["management"].contains("autoUpgrade")) np["management"]["autoUpgrade"] = true;
  if (!np["management"].contains("autoRepair")) np["management"]["autoRepair"] = true;
  if (!np.contains("upgradeSettings"))
    np["upgradeSettings"] = {{"maxSurge", 1}, {"strategy", "SURGE"}};
  if (!np.contains("locations")) np["locations"] = cluster.value("locations", json::array());
  if (!np.contains("version")) np["version"] = cluster.value("currentNodeVersion", kGkeVersion);
  if (!np.contains("maxPodsConstraint")) np["maxPodsConstraint"] = {{"maxPodsPerNode", "110"}};
  np["podIpv4CidrSize"] = 24;
  np["selfLink"] = p.self_link();
  char hash[16];
  std::snprintf(hash, sizeof hash, "%08x", static_cast<unsigned>(ctx.rng() & 0xffffffffu));
  json urls = json::array();
  for (const auto& z : np["locations"]) {
    urls.push_back("https://www.googleapis.com/compute/v1/projects/" + p.project + "/zones/" +
                   z.get<std::string>() + "/instanceGroupManagers/gke-" + p.cluster.substr(0, 20) +
                   "-" + p.pool.substr(0, 20) + "-" + hash + "-grp");
  }
  np["instanceGroupUrls"] = urls;
  np["etag"] = std::string(hash);
  np["status"] = "PROVISIONING";
}

std::string ReservationName(const json& cfg) {
  const json ra = cfg.value("reservationAffinity", json::object());
  if (ra.value("consumeReservationType", "") != "SPECIFIC_RESERVATION") return "";
  const json values = ra.value("values", json::array());
  if (values.empty()) return "";
  std::string v = values[0].get<std::string>();
  return v.substr(v.rfind('/') + 1);  // "projects/P/reservations/R" or "R"
}

// What a TPU pool is, after checking its machine type against its placement.
struct TpuPlan {
  std::string accelerator;
  int vms = 1;
  int64_t chips = 0;
  bool multi_host = false;
};

std::variant<TpuPlan, ApiError> PlanTpu(SimContext& ctx, const PoolPath& p, json& np) {
  json& cfg = np["config"];
  const std::string machine = cfg.value("machineType", "");
  auto tpu = FindTpuMachine(machine);
  json& placement = np["placementPolicy"];
  if (!placement.is_object()) np.erase("placementPolicy");
  const json pp = np.value("placementPolicy", json::object());
  if (!tpu) {
    if (pp.contains("tpuTopology"))
      return BadRequest("tpu_topology is only supported for TPU machine types, got \"" + machine + "\".");
    return TpuPlan{};
  }
  TpuPlan plan;
  plan.accelerator = tpu->accelerator;
  const int nodes = np.value("initialNodeCount", 0);
  std::string topology = pp.value("tpuTopology", "");
  if (pp.contains("policyName")) {
    // A workload policy (tpu7x) carries the topology; GKE reports it back.
    const std::string zone = np["locations"].empty() ? p.location : np["locations"][0].get<std::string>();
    const std::string policy = pp["policyName"].get<std::string>();
    const std::string key = "projects/" + p.project + "/regions/" + RegionOf(zone) +
                            "/resourcePolicies/" + policy.substr(policy.rfind('/') + 1);
    auto it = ctx.state.compute.find(key);
    if (it == ctx.state.compute.end())
      return BadRequest("Resource policy \"" + key + "\" was not found.");
    const json wp = it->second.value("workloadPolicy", json::object());
    if (wp.value("type", "") != "HIGH_THROUGHPUT" || !wp.contains("acceleratorTopology"))
      return BadRequest("Resource policy \"" + key +
                        "\" is not a HIGH_THROUGHPUT workload policy with an acceleratorTopology.");
    if (!topology.empty() && topology != wp["acceleratorTopology"])
      return BadRequest("tpu_topology \"" + topology + "\" does not match the acceleratorTopology of \"" + key + "\".");
    topology = wp["acceleratorTopology"].get<std::string>();
    np["placementPolicy"] = {{"policyName", policy}, {"tpuTopology", topology}};
  } else if (!topology.empty()) {
    np["placementPolicy"]["type"] = "COMPACT";
  }
  if (topology.empty()) {  // single-host TPU machines, nodeCount of them
    plan.chips = static_cast<int64_t>(tpu->chips_per_vm) * nodes;
    return plan;
  }
  auto slice = ResolveTpuSlice(machine, topology);
  if (!slice.slice) return BadRequest(slice.error);
  plan.vms = slice.slice->vms;
  plan.multi_host = plan.vms > 1;
  if (plan.multi_host && nodes != plan.vms) {
    return BadRequest("Invalid node count " + std::to_string(nodes) + " for TPU topology \"" +
                      topology + "\" of machine type \"" + machine + "\": must be " +
                      std::to_string(plan.vms) + ".");
  }
  if (plan.multi_host && np.value("autoscaling", json::object()).value("enabled", false))
    return BadRequest("Autoscaling is not supported for multi-host TPU node pools.");
  plan.chips = plan.multi_host ? slice.slice->chips : static_cast<int64_t>(tpu->chips_per_vm) * nodes;
  return plan;
}

bool IsMultiHost(const PoolRecord& pool) {
  const json pp = pool.wire.value("placementPolicy", json::object());
  if (!pp.contains("tpuTopology")) return false;
  const std::string machine = pool.wire["config"].value("machineType", "");
  auto slice = ResolveTpuSlice(machine, pp["tpuTopology"].get<std::string>());
  return slice.slice && slice.slice->vms > 1;
}

SimResponse CreatePool(SimContext& ctx, const SimRequest& req, const PoolPath& base) {
  if (auto err = ApiSchema::Builtin().Validate(req.parsed, "google.container.v1.CreateNodePoolRequest", ""))
    return ErrorResponse(BadRequest(*err));
  if (!req.parsed.contains("nodePool") && !req.parsed.contains("node_pool"))
    return ErrorResponse(BadRequest("Node pool must be specified."));
  json np = req.parsed.contains("nodePool") ? req.parsed["nodePool"] : req.parsed["node_pool"];
  PoolPath p = base;
  p.pool = np.value("name", "");
  if (!ValidPoolName(p.pool)) {
    return ErrorResponse(BadRequest("Invalid node pool name \"" + p.pool +
                                    "\": must be 1-40 lowercase letters, digits or hyphens, "
                                    "starting with a letter."));
  }
  const json& cluster = ctx.state.clusters.at(p.cluster_key());
  if (ctx.state.pools.count(p.pool_key()))
    return ErrorResponse(AlreadyExists("Already exists: " + p.resource() + "."));
  if (auto busy = BusyCluster(ctx.state, p.cluster_key())) return *busy;
  if (np.value("initialNodeCount", 0) < 0)
    return ErrorResponse(BadRequest("Node pool initial_node_count must be non-negative."));
  FillDefaults(np, p, cluster, ctx);
  auto planned = PlanTpu(ctx, p, np);
  if (auto* e = std::get_if<ApiError>(&planned)) return ErrorResponse(*e);
  const TpuPlan& plan = std::get<TpuPlan>(planned);

  PoolRecord rec;
  rec.zone = np["locations"].empty() ? p.location : np["locations"][0].get<std::string>();
  rec.accelerator = plan.accelerator;
  rec.reservation = ReservationName(np["config"]);
  rec.node_count = np.value("initialNodeCount", 0);
  json error;
  if (!plan.accelerator.empty() && plan.chips > 0) {
    std::string stockout = ctx.state.capacity.Acquire(rec.zone, rec.accelerator, rec.reservation, plan.chips);
    if (stockout.empty()) rec.chips = plan.chips;
    else error = {{"code", 8}, {"message", "Failed to create node pool \"" + p.pool + "\": " + stockout}};
  }
  rec.wire = np;
  ctx.state.pools[p.pool_key()] = rec;
  CreatePoolInstanceGroups(ctx.state, rec, ctx.now_ms);
  GkeOpSpec spec{p.project, p.location, p.cluster_key(), "CREATE_NODE_POOL", p.self_link(),
                 OpEffect::kCreatePool, p.pool_key(), error};
  return Ok(StartGkeOperation(ctx, spec).wire);
}

// PUT …/nodePools/N: the set-valued fields come in wrapper objects
// ({"labels":{"labels":{…}}}) that replace the whole set.
SimResponse UpdatePool(SimContext& ctx, const SimRequest& req, const PoolPath& p, PoolRecord& pool) {
  if (auto err = ApiSchema::Builtin().Validate(req.parsed, "google.container.v1.UpdateNodePoolRequest", ""))
    return ErrorResponse(BadRequest(*err));
  const json& b = req.parsed;
  json& cfg = pool.wire["config"];
  const bool tpu = FindTpuMachine(cfg.value("machineType", "")).has_value();
  if (b.contains("machineType") && tpu && b["machineType"] != cfg["machineType"])
    return ErrorResponse(BadRequest("The machine type of a TPU node pool cannot be changed."));
  if (auto busy = BusyCluster(ctx.state, p.cluster_key())) return *busy;
  struct Wrapper { const char* field; const char* inner; const char* target; };
  for (const Wrapper& w : {Wrapper{"labels", "labels", "labels"}, Wrapper{"taints", "taints", "taints"},
                           Wrapper{"resourceLabels", "labels", "resourceLabels"},
                           Wrapper{"tags", "tags", "tags"}}) {
    if (!b.contains(w.field)) continue;
    const json inner = b[w.field].value(w.inner, json());
    bool empty = inner.is_null() || inner.empty();
    if (empty) cfg.erase(w.target);
    else cfg[w.target] = inner;
  }
  for (const char* f : {"imageType", "diskType", "diskSizeGb", "machineType"})
    if (b.contains(f)) cfg[f] = b[f];
  if (b.contains("nodeVersion") && !b["nodeVersion"].get<std::string>().empty() &&
      b["nodeVersion"] != "-") {
    pool.wire["version"] = b["nodeVersion"];
  }
  if (b.contains("locations") && !b["locations"].empty()) pool.wire["locations"] = b["locations"];
  if (b.contains("upgradeSettings")) pool.wire["upgradeSettings"].update(b["upgradeSettings"]);
  pool.wire["status"] = "RECONCILING";
  GkeOpSpec spec{p.project, p.location, p.cluster_key(), "UPGRADE_NODES", p.self_link(),
                 OpEffect::kReconcilePool, p.pool_key(), nullptr};
  return Ok(StartGkeOperation(ctx, spec).wire);
}

SimResponse SetSize(SimContext& ctx, const SimRequest& req, const PoolPath& p, PoolRecord& pool) {
  if (auto err = ApiSchema::Builtin().Validate(req.parsed, "google.container.v1.SetNodePoolSizeRequest", ""))
    return ErrorResponse(BadRequest(*err));
  if (IsMultiHost(pool))
    return ErrorResponse(BadRequest("Resizing a multi-host TPU slice node pool is not supported: "
                                    "its node count is fixed by its TPU topology."));
  const int want = req.parsed.value("nodeCount", req.parsed.value("node_count", 0));
  if (want < 0) return ErrorResponse(BadRequest("node_count must be non-negative."));
  if (auto busy = BusyCluster(ctx.state, p.cluster_key())) return *busy;
  json error;
  auto tpu = FindTpuMachine(pool.wire["config"].value("machineType", ""));
  const int64_t per_node = tpu ? tpu->chips_per_vm : 0;
  const int64_t delta = per_node * (want - pool.node_count);
  if (delta > 0) {
    std::string stockout = ctx.state.capacity.Acquire(pool.zone, pool.accelerator, pool.reservation, delta);
    if (!stockout.empty()) error = {{"code", 8}, {"message", "Failed to resize node pool \"" + p.pool + "\": " + stockout}};
    else pool.chips += delta;
  } else if (delta < 0) {
    ctx.state.capacity.Release(pool.zone, pool.accelerator, pool.reservation, -delta);
    pool.chips += delta;
  }
  if (error.is_null()) {
    pool.node_count = want;
    SizePoolInstanceGroups(ctx.state, pool, /*stable=*/false);
  }
  pool.wire["status"] = "RECONCILING";
  GkeOpSpec spec{p.project, p.location, p.cluster_key(), "SET_NODE_POOL_SIZE", p.self_link(),
                 OpEffect::kReconcilePool, p.pool_key(), error};
  return Ok(StartGkeOperation(ctx, spec).wire);
}

SimResponse SetAutoscaling(SimContext& ctx, const SimRequest& req, const PoolPath& p, PoolRecord& pool) {
  if (auto err = ApiSchema::Builtin().Validate(req.parsed, "google.container.v1.SetNodePoolAutoscalingRequest", ""))
    return ErrorResponse(BadRequest(*err));
  const json a = req.parsed.value("autoscaling", json::object());
  if (IsMultiHost(pool) && a.value("enabled", false))
    return ErrorResponse(BadRequest("Autoscaling is not supported for multi-host TPU node pools."));
  if (auto busy = BusyCluster(ctx.state, p.cluster_key())) return *busy;
  if (a.empty()) pool.wire.erase("autoscaling");
  else pool.wire["autoscaling"] = a;
  pool.wire["status"] = "RECONCILING";
  GkeOpSpec spec{p.project, p.location, p.cluster_key(), "UPDATE_CLUSTER", p.self_link(),
                 OpEffect::kReconcilePool, p.pool_key(), nullptr};
  return Ok(StartGkeOperation(ctx, spec).wire);
}

SimResponse SetManagement(SimContext& ctx, const SimRequest& req, const PoolPath& p, PoolRecord& pool) {
  if (auto err = ApiSchema::Builtin().Validate(req.parsed, "google.container.v1.SetNodePoolManagementRequest", ""))
    return ErrorResponse(BadRequest(*err));
  if (auto busy = BusyCluster(ctx.state, p.cluster_key())) return *busy;
  const json m = req.parsed.value("management", json::object());
  for (const char* f : {"autoUpgrade", "autoRepair"})
    pool.wire["management"][f] = m.value(f, false);
  GkeOpSpec spec{p.project, p.location, p.cluster_key(), "SET_NODE_POOL_MANAGEMENT", p.self_link(),
                 OpEffect::kReconcilePool, p.pool_key(), nullptr};
  return Ok(StartGkeOperation(ctx, spec).wire);
}

SimResponse DeletePool(SimContext& ctx, const PoolPath& p, PoolRecord& pool) {
  if (auto busy = BusyCluster(ctx.state, p.cluster_key())) return *busy;
  pool.wire["status"] = "STOPPING";
  GkeOpSpec spec{p.project, p.location, p.cluster_key(), "DELETE_NODE_POOL", p.self_link(),
                 OpEffect::kDeletePool, p.pool_key(), nullptr};
  return Ok(StartGkeOperation(ctx, spec).wire);
}

}  // namespace

SimResponse HandleGkeNodePools(SimContext& ctx, const SimRequest& req) {
  const auto& s = req.segments;  // v1 projects P locations L clusters C nodePools [N[:verb]]
  PoolPath p{s[2], s[4], s[6], "", ""};
  if (!ctx.state.clusters.count(p.cluster_key())) {
    return ErrorResponse(NotFound("Not found: projects/" + p.project + "/locations/" + p.location +
                                  "/clusters/" + p.cluster + "."));
  }
  if (s.size() == 8) {
    if (req.method == "POST") return CreatePool(ctx, req, p);
    if (req.method == "GET") {
      json pools = json::array();
      const std::string prefix = p.cluster_key() + "/";
      for (auto it = ctx.state.pools.lower_bound(prefix);
           it != ctx.state.pools.end() && it->first.rfind(prefix, 0) == 0; ++it)
        pools.push_back(it->second.wire);
      json body = json::object();
      if (!pools.empty()) body["nodePools"] = pools;
      return Ok(body);
    }
    return ErrorResponse(NotFound("Method not found."));
  }
  std::string last = s[8];
  if (auto colon = last.find(':'); colon != std::string::npos) {
    p.verb = last.substr(colon + 1);
    last = last.substr(0, colon);
  }
  p.pool = last;
  auto it = ctx.state.pools.find(p.pool_key());
  if (it == ctx.state.pools.end()) return ErrorResponse(NotFound("Not found: " + p.resource() + "."));
  PoolRecord& pool = it->second;
  if (p.verb.empty()) {
    if (req.method == "GET") return Ok(pool.wire);
    if (req.method == "PUT") return UpdatePool(ctx, req, p, pool);
    if (req.method == "DELETE") return DeletePool(ctx, p, pool);
  } else if (req.method == "POST") {
    if (p.verb == "setSize") return SetSize(ctx, req, p, pool);
    if (p.verb == "setAutoscaling") return SetAutoscaling(ctx, req, p, pool);
    if (p.verb == "setManagement") return SetManagement(ctx, req, p, pool);
  }
  return ErrorResponse(NotFound("Method not found."));
}

}  // namespace tpu::sim
