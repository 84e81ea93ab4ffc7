// Node pool defaults and body rules (see gke_pool_rules.h).
#include "sim/gke_pool_rules.h"

#include <cctype>
#include <cstdio>

#include "sim/compute_reservations.h"
#include "sim/gke_node_options.h"
#include "sim/gke_routes.h"
#include "sim/tpu_shapes.h"

namespace tpu::sim {
namespace {

bool ValidPoolName(const std::string& n) {
  if (n.empty() || n.size() > 40 || !std::islower(static_cast<unsigned char>(n[0]))) return false;
  for (char c : n)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-'))
      return false;
  return n.back() != '-';
}

// Fields GKE fills in on a pool the request left them out of. A management
// object that is sent is a proto3 message: a field it leaves out is false.
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
  if (!np.contains("management") || !np["management"].is_object()) {
    np["management"] = {{"autoUpgrade", true}, {"autoRepair", true}};
  } else {
    for (const char* f : {"autoUpgrade", "autoRepair"})
      np["management"][f] = np["management"].value(f, false);
  }
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

bool Enabled(const json& autoscaling) {
  return autoscaling.is_object() && autoscaling.value("enabled", false);
}

// Per-location and total bounds (NodePoolAutoscaling's comments in the proto).
std::optional<ApiError> CheckBounds(const json& a) {
  if (!Enabled(a)) return std::nullopt;
  const bool per_zone = a.contains("minNodeCount") || a.contains("maxNodeCount");
  const bool total = a.contains("totalMinNodeCount") || a.contains("totalMaxNodeCount");
  if (per_zone && total)
    return BadRequest("Autoscaling: the total_*_node_count fields are mutually exclusive with the "
                      "*_node_count fields.");
  const char* min_f = total ? "totalMinNodeCount" : "minNodeCount";
  const char* max_f = total ? "totalMaxNodeCount" : "maxNodeCount";
  const int min = a.value(min_f, 0), max = a.value(max_f, 0);
  if (min < 0 || min > max) {
    return BadRequest("Autoscaling: " + std::string(min_f) + " (" + std::to_string(min) +
                      ") must be greater than or equal to 0 and less than or equal to " + max_f +
                      " (" + std::to_string(max) + ").");
  }
  return std::nullopt;
}

// A multi-host slice is autoscaled only as a whole: between 0 and its VMs.
std::optional<ApiError> CheckSliceAutoscaling(const json& a, int vms, const std::string& topology) {
  const bool total = a.contains("totalMinNodeCount") || a.contains("totalMaxNodeCount");
  const int min = a.value(total ? "totalMinNodeCount" : "minNodeCount", 0);
  const int max = a.value(total ? "totalMaxNodeCount" : "maxNodeCount", 0);
  if (max == vms && min == 0) return std::nullopt;
  return BadRequest("Invalid autoscaling for a multi-host TPU slice node pool: a slice of topology \"" +
                    topology + "\" scales as a whole between 0 and its " + std::to_string(vms) +
                    " VMs, so the minimum must be 0 and the maximum " + std::to_string(vms) +
                    " (got " + std::to_string(min) + " and " + std::to_string(max) + ").");
}

struct TpuPlan {
  std::string accelerator;
  int vms = 1;
  int64_t chips = 0;  // taken by the initial nodes
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
  plan.chips = static_cast<int64_t>(tpu->chips_per_vm) * nodes;
  if (topology.empty()) return plan;  // single-host TPU machines, nodeCount of them
  auto slice = ResolveTpuSlice(machine, topology);
  if (!slice.slice) return BadRequest(slice.error);
  plan.vms = slice.slice->vms;
  if (plan.vms == 1) return plan;
  const json autoscaling = np.value("autoscaling", json::object());
  if (Enabled(autoscaling)) {
    // Scale-to-zero slices start empty or whole; the autoscaler moves them.
    if (auto e = CheckSliceAutoscaling(autoscaling, plan.vms, topology)) return *e;
    if (nodes != 0 && nodes != plan.vms) {
      return BadRequest("Invalid node count " + std::to_string(nodes) + " for autoscaled TPU topology \"" +
                        topology + "\" of machine type \"" + machine + "\": must be 0 or " +
                        std::to_string(plan.vms) + ".");
    }
  } else if (nodes != plan.vms) {
    return BadRequest("Invalid node count " + std::to_string(nodes) + " for TPU topology \"" +
                      topology + "\" of machine type \"" + machine + "\": must be " +
                      std::to_string(plan.vms) + ".");
  }
  plan.chips = nodes == 0 ? 0 : slice.slice->chips;
  return plan;
}

// Flex-start goes through the Dynamic Workload Scheduler: no Spot, no
// reservation, auto-repair off, nodes only through the autoscaler.
std::optional<ApiError> CheckFlexStart(const json& np) {
  const json& cfg = np["config"];
  if (!cfg.value("flexStart", false)) return std::nullopt;
  if (cfg.value("spot", false) || cfg.value("preemptible", false))
    return BadRequest("Flex-start node pools cannot use Spot or preemptible VMs.");
  const std::string ra =
      cfg.value("reservationAffinity", json::object()).value("consumeReservationType", "");
  if (ra != "NO_RESERVATION") {
    return BadRequest("Flex-start node pools require reservation affinity NO_RESERVATION, got " +
                      (ra.empty() ? std::string("none") : ra) + ".");
  }
  if (np["management"].value("autoRepair", false))
    return BadRequest("Flex-start node pools require node auto-repair to be disabled.");
  if (!Enabled(np.value("autoscaling", json::object())))
    return BadRequest("Flex-start node pools require autoscaling: their nodes are provisioned "
                      "by the Dynamic Workload Scheduler when the autoscaler asks for them.");
  return std::nullopt;
}

std::optional<ApiError> RefuseAutoUpgradeOff(const json& cluster, const json& management) {
  const std::string channel = ReleaseChannelOf(cluster);
  if (channel.empty() || management.value("autoUpgrade", false)) return std::nullopt;
  return BadRequest("Auto_upgrade cannot be false when release_channel " + channel + " is set.");
}

}  // namespace

std::string ReleaseChannelOf(const json& cluster) {
  const std::string c = cluster.value("releaseChannel", json::object()).value("channel", "");
  return c == "UNSPECIFIED" ? "" : c;
}

std::variant<PreparedPool, ApiError> PreparePool(SimContext& ctx, const PoolPath& p, json np,
                                                 const json& cluster) {
  if (!ValidPoolName(p.pool)) {
    return BadRequest("Invalid node pool name \"" + p.pool +
                      "\": must be 1-40 lowercase letters, digits or hyphens, starting with a letter.");
  }
  if (np.value("initialNodeCount", 0) < 0)
    return BadRequest("Node pool initial_node_count must be non-negative.");
  if (auto e = CheckNodeOptions(np)) return *e;
  FillDefaults(np, p, cluster, ctx);
  if (auto e = CheckBounds(np.value("autoscaling", json::object()))) return *e;
  auto planned = PlanTpu(ctx, p, np);
  if (auto* e = std::get_if<ApiError>(&planned)) return *e;
  if (auto e = CheckFlexStart(np)) return *e;
  if (auto e = RefuseAutoUpgradeOff(cluster, np["management"])) return *e;
  const TpuPlan& plan = std::get<TpuPlan>(planned);
  PreparedPool out;
  PoolRecord& rec = out.record;
  rec.zone = np["locations"].empty() ? p.location : np["locations"][0].get<std::string>();
  rec.accelerator = plan.accelerator;
  rec.reservation =
      ConsumedReservation(np["config"].value("reservationAffinity", json::object()), p.project);
  rec.node_count = np.value("initialNodeCount", 0);
  rec.wire = std::move(np);
  out.chips = plan.accelerator.empty() ? 0 : plan.chips;
  return out;
}

std::optional<ApiError> CheckManagement(const json& cluster, const PoolRecord& pool,
                                        const json& management) {
  if (auto e = RefuseAutoUpgradeOff(cluster, management)) return e;
  if (pool.wire["config"].value("flexStart", false) && management.value("autoRepair", false))
    return BadRequest("Flex-start node pools require node auto-repair to be disabled.");
  return std::nullopt;
}

std::optional<ApiError> CheckAutoscaling(const PoolRecord& pool, const json& autoscaling) {
  if (auto e = CheckBounds(autoscaling)) return e;
  const int vms = MultiHostVms(pool);
  if (vms > 1 && Enabled(autoscaling)) {
    const std::string topology = pool.wire["placementPolicy"].value("tpuTopology", "");
    return CheckSliceAutoscaling(autoscaling, vms, topology);
  }
  if (pool.wire["config"].value("flexStart", false) && !Enabled(autoscaling))
    return BadRequest("Flex-start node pools require autoscaling: their nodes are provisioned "
                      "by the Dynamic Workload Scheduler when the autoscaler asks for them.");
  return std::nullopt;
}

int MultiHostVms(const PoolRecord& pool) {
  const json pp = pool.wire.value("placementPolicy", json::object());
  if (!pp.contains("tpuTopology")) return 0;
  const std::string machine = pool.wire["config"].value("machineType", "");
  auto slice = ResolveTpuSlice(machine, pp["tpuTopology"].get<std::string>());
  return slice.slice && slice.slice->vms > 1 ? slice.slice->vms : 0;
}

}  // namespace tpu::sim
