// GKE node pool routes:
//   GET/POST   …/clusters/C/nodePools
//   GET/PUT/DELETE …/clusters/C/nodePools/N
//   POST       …/nodePools/N:setSize | :setAutoscaling | :setManagement
// with the real API's rules: the body rules of gke_pool_rules.h, GKE's
// concurrent-operation rules (gke_concurrency.h), capacity (stockouts end the
// create operation with an error and leave the pool in ERROR), and multi-host
// TPU pools that setSize cannot resize.
#include <optional>
#include <variant>

#include "sim/api_schema.h"
#include "sim/cloud_errors.h"
#include "sim/cloud_operations.h"
#include "sim/gke_concurrency.h"
#include "sim/gke_instance_groups.h"
#include "sim/gke_pool_rules.h"
#include "sim/gke_routes.h"
#include "sim/tpu_shapes.h"

namespace tpu::sim {
namespace {

std::optional<SimResponse> Busy(const SimContext& ctx, const PoolPath& p) {
  if (auto e = RefusePoolOperation(ctx.state, p.cluster_key(), p.pool_key(), ctx.operations_quota))
    return ErrorResponse(*e);
  return std::nullopt;
}

SimResponse CreatePool(SimContext& ctx, const SimRequest& req, const PoolPath& base) {
  if (auto err = ApiSchema::Builtin().Validate(req.parsed, "google.container.v1.CreateNodePoolRequest", ""))
    return ErrorResponse(BadRequest(*err));
  if (!req.parsed.contains("nodePool") && !req.parsed.contains("node_pool"))
    return ErrorResponse(BadRequest("Node pool must be specified."));
  json np = req.parsed.contains("nodePool") ? req.parsed["nodePool"] : req.parsed["node_pool"];
  PoolPath p = base;
  p.pool = np.value("name", "");
  if (ctx.state.pools.count(p.pool_key()))
    return ErrorResponse(AlreadyExists("Already exists: " + p.resource() + "."));
  const json& cluster = ctx.state.clusters.at(p.cluster_key());
  auto prepared = PreparePool(ctx, p, std::move(np), cluster);
  if (auto* e = std::get_if<ApiError>(&prepared)) return ErrorResponse(*e);
  if (auto busy = Busy(ctx, p)) return *busy;
  PreparedPool& pp = std::get<PreparedPool>(prepared);
  json error = AcquirePoolChips(ctx.state, pp.record, pp.chips, "Failed to create node pool \"" + p.pool + "\": ");
  ctx.state.pools[p.pool_key()] = pp.record;
  CreatePoolInstanceGroups(ctx.state, pp.record, ctx.now_ms);
  GkeOpSpec spec{p.project, p.location, p.cluster_key(), "CREATE_NODE_POOL", p.self_link(),
                 OpEffect::kCreatePool, p.pool_key(), error};
  return OkResponse(StartGkeOperation(ctx, spec).wire);
}

// PUT …/nodePools/N: the set-valued fields come in wrapper objects
// ({"labels":{"labels":{…}}}) that replace the whole set. diskSizeGb,
// diskType and locations migrate the nodes in place (UpdateNodePoolRequest).
SimResponse UpdatePool(SimContext& ctx, const SimRequest& req, const PoolPath& p, PoolRecord& pool) {
  if (auto err = ApiSchema::Builtin().Validate(req.parsed, "google.container.v1.UpdateNodePoolRequest", ""))
    return ErrorResponse(BadRequest(*err));
  const json& b = req.parsed;
  json& cfg = pool.wire["config"];
  const bool tpu = FindTpuMachine(cfg.value("machineType", "")).has_value();
  if (b.contains("machineType") && tpu && b["machineType"] != cfg["machineType"])
    return ErrorResponse(BadRequest("The machine type of a TPU node pool cannot be changed."));
  // int64 in proto3 JSON: a string or a number.
  const json size = b.value("diskSizeGb", json());
  const int64_t disk_gb = size.is_string() ? std::stoll(size.get<std::string>()) : size.is_number() ? size.get<int64_t>() : -1;
  if (disk_gb >= 0 && disk_gb < 10)
    return ErrorResponse(BadRequest("The smallest allowed disk size is 10GB, got " + std::to_string(disk_gb) + "GB."));
  if (auto busy = Busy(ctx, p)) return *busy;
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
  for (const char* f : {"imageType", "diskType", "machineType"})
    if (b.contains(f) && !b[f].get<std::string>().empty()) cfg[f] = b[f];
  if (disk_gb > 0) cfg["diskSizeGb"] = disk_gb;
  if (b.contains("nodeVersion") && !b["nodeVersion"].get<std::string>().empty() &&
      b["nodeVersion"] != "-") {
    pool.wire["version"] = b["nodeVersion"];
  }
  if (b.contains("locations") && !b["locations"].empty()) RelocatePoolInstanceGroups(ctx.state, pool, b["locations"], ctx.now_ms);
  if (b.contains("upgradeSettings")) pool.wire["upgradeSettings"].update(b["upgradeSettings"]);
  pool.wire["status"] = "RECONCILING";
  GkeOpSpec spec{p.project, p.location, p.cluster_key(), "UPGRADE_NODES", p.self_link(),
                 OpEffect::kReconcilePool, p.pool_key(), nullptr};
  return OkResponse(StartGkeOperation(ctx, spec).wire);
}

SimResponse SetSize(SimContext& ctx, const SimRequest& req, const PoolPath& p, PoolRecord& pool) {
  if (auto err = ApiSchema::Builtin().Validate(req.parsed, "google.container.v1.SetNodePoolSizeRequest", ""))
    return ErrorResponse(BadRequest(*err));
  if (MultiHostVms(pool) > 0)
    return ErrorResponse(BadRequest("Resizing a multi-host TPU slice node pool is not supported: "
                                    "its node count is fixed by its TPU topology."));
  const int want = req.parsed.value("nodeCount", req.parsed.value("node_count", 0));
  if (want < 0) return ErrorResponse(BadRequest("node_count must be non-negative."));
  if (auto busy = Busy(ctx, p)) return *busy;
  json error;
  auto tpu = FindTpuMachine(pool.wire["config"].value("machineType", ""));
  const int64_t per_node = tpu ? tpu->chips_per_vm : 0;
  const int64_t delta = per_node * (want - pool.node_count);
  if (delta > 0) {
    std::string stockout =
        ctx.state.capacity.Acquire(pool.zone, pool.accelerator, pool.reservation, delta, ProvisioningModelOf(pool));
    if (!stockout.empty()) error = {{"code", 8}, {"message", "Failed to resize node pool \"" + p.pool + "\": " + stockout}};
    else pool.chips += delta;
  } else if (delta < 0) {
    ctx.state.capacity.Release(pool.zone, pool.accelerator, pool.reservation, -delta, ProvisioningModelOf(pool));
    pool.chips += delta;
  }
  if (error.is_null()) {
    pool.node_count = want;
    SizePoolInstanceGroups(ctx.state, pool, /*stable=*/false);
  }
  pool.wire["status"] = "RECONCILING";
  GkeOpSpec spec{p.project, p.location, p.cluster_key(), "SET_NODE_POOL_SIZE", p.self_link(),
                 OpEffect::kReconcilePool, p.pool_key(), error};
  return OkResponse(StartGkeOperation(ctx, spec).wire);
}

SimResponse SetAutoscaling(SimContext& ctx, const SimRequest& req, const PoolPath& p, PoolRecord& pool) {
  if (auto err = ApiSchema::Builtin().Validate(req.parsed, "google.container.v1.SetNodePoolAutoscalingRequest", ""))
    return ErrorResponse(BadRequest(*err));
  const json a = req.parsed.value("autoscaling", json::object());
  if (auto e = CheckAutoscaling(pool, a)) return ErrorResponse(*e);
  if (auto busy = Busy(ctx, p)) return *busy;
  if (a.empty()) pool.wire.erase("autoscaling");
  else pool.wire["autoscaling"] = a;
  pool.wire["status"] = "RECONCILING";
  GkeOpSpec spec{p.project, p.location, p.cluster_key(), "UPDATE_CLUSTER", p.self_link(),
                 OpEffect::kReconcilePool, p.pool_key(), nullptr};
  return OkResponse(StartGkeOperation(ctx, spec).wire);
}

SimResponse SetManagement(SimContext& ctx, const SimRequest& req, const PoolPath& p, PoolRecord& pool) {
  if (auto err = ApiSchema::Builtin().Validate(req.parsed, "google.container.v1.SetNodePoolManagementRequest", ""))
    return ErrorResponse(BadRequest(*err));
  const json m = req.parsed.value("management", json::object());
  if (auto e = CheckManagement(ctx.state.clusters.at(p.cluster_key()), pool, m)) return ErrorResponse(*e);
  if (auto busy = Busy(ctx, p)) return *busy;
  for (const char* f : {"autoUpgrade", "autoRepair"})
    pool.wire["management"][f] = m.value(f, false);
  GkeOpSpec spec{p.project, p.location, p.cluster_key(), "SET_NODE_POOL_MANAGEMENT", p.self_link(),
                 OpEffect::kReconcilePool, p.pool_key(), nullptr};
  return OkResponse(StartGkeOperation(ctx, spec).wire);
}

SimResponse DeletePool(SimContext& ctx, const PoolPath& p, PoolRecord& pool) {
  if (auto busy = Busy(ctx, p)) return *busy;
  pool.wire["status"] = "STOPPING";
  GkeOpSpec spec{p.project, p.location, p.cluster_key(), "DELETE_NODE_POOL", p.self_link(),
                 OpEffect::kDeletePool, p.pool_key(), nullptr};
  return OkResponse(StartGkeOperation(ctx, spec).wire);
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
      return OkResponse(body);
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
    if (req.method == "GET") return OkResponse(pool.wire);
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
