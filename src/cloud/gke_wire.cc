// GKE container/v1 JSON mapping of node pools, clusters and operations.
#include "cloud/gke_wire.h"

#include "cloud/compute_wire.h"  // SegmentAfter, LastSegment
#include "cloud/wire_reader.h"

namespace tpu::cloud {
namespace {

using nlohmann::json;

// Failure reasons worth telling apart (stockouts become WaitingForCapacity).
constexpr const char* kKnownReasons[] = {"GCE_STOCKOUT", "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS",
                                         "ZONE_RESOURCE_POOL_EXHAUSTED", "GCE_QUOTA_EXCEEDED",
                                         "QUOTA_EXCEEDED"};

json TaintsJson(const std::vector<NodeTaint>& taints) {
  json a = json::array();
  for (const auto& t : taints) a.push_back({{"key", t.key}, {"value", t.value}, {"effect", t.effect}});
  return a;
}

json MapJson(const StringMap& m) {
  json o = json::object();
  for (const auto& [k, v] : m) o[k] = v;
  return o;
}

void ReadTaints(WireReader& r, const json& j, std::optional<std::vector<NodeTaint>>* out) {
  auto* a = r.Array(j, "taints");
  if (!a) return;
  std::vector<NodeTaint> taints;
  for (const auto& item : *a) {
    NodeTaint t;
    r.String(item, "key", &t.key);
    r.String(item, "value", &t.value);
    r.String(item, "effect", &t.effect);
    taints.push_back(std::move(t));
  }
  *out = std::move(taints);
}

json AutoscalingJson(const NodePoolAutoscaling& a) {
  json as = {{"enabled", a.enabled}};
  if (a.enabled) {
    as["minNodeCount"] = a.min_node_count;
    as["maxNodeCount"] = a.max_node_count;
    if (!a.location_policy.empty()) as["locationPolicy"] = a.location_policy;
  }
  return as;
}

}  // namespace

std::string KnownFailureReason(const std::string& text) {
  for (const char* r : kKnownReasons) {
    if (text.find(r) != std::string::npos) return r;
  }
  return "";
}

json NodePoolToJson(const NodePool& p) {
  json config = json::object();
  if (!p.machine_type.empty()) config["machineType"] = p.machine_type;
  if (p.disk_size_gb) config["diskSizeGb"] = *p.disk_size_gb;
  if (p.disk_type) config["diskType"] = *p.disk_type;
  if (p.image_type) config["imageType"] = *p.image_type;
  if (p.service_account) config["serviceAccount"] = *p.service_account;
  if (p.oauth_scopes) config["oauthScopes"] = *p.oauth_scopes;
  if (p.labels) config["labels"] = MapJson(*p.labels);
  if (p.taints) config["taints"] = TaintsJson(*p.taints);
  if (p.resource_labels) config["resourceLabels"] = MapJson(*p.resource_labels);
  if (p.tags) config["tags"] = *p.tags;
  if (p.metadata) config["metadata"] = MapJson(*p.metadata);
  if (p.spot) config["spot"] = true;
  if (p.flex_start) config["flexStart"] = true;
  if (p.reservation_affinity) {
    json ra = {{"consumeReservationType", p.reservation_affinity->consume_reservation_type}};
    if (!p.reservation_affinity->key.empty()) ra["key"] = p.reservation_affinity->key;
    if (!p.reservation_affinity->values.empty()) ra["values"] = p.reservation_affinity->values;
    config["reservationAffinity"] = ra;
  }
  if (p.secure_boot || p.integrity_monitoring) {
    json sh = json::object();
    if (p.secure_boot) sh["enableSecureBoot"] = *p.secure_boot;
    if (p.integrity_monitoring) sh["enableIntegrityMonitoring"] = *p.integrity_monitoring;
    config["shieldedInstanceConfig"] = sh;
  }
  if (p.boot_disk_kms_key) config["bootDiskKmsKey"] = *p.boot_disk_kms_key;
  if (!p.secondary_boot_disks.empty()) {
    json disks = json::array();
    for (const auto& d : p.secondary_boot_disks) {
      json dj = {{"diskImage", d.disk_image}};
      if (!d.mode.empty()) dj["mode"] = d.mode;
      disks.push_back(dj);
    }
    config["secondaryBootDisks"] = disks;
  }

  json j = {{"name", p.name}, {"config", config}};
  if (p.node_count > 0) j["initialNodeCount"] = p.node_count;
  if (p.placement_policy) {
    json pp = json::object();
    if (!p.placement_policy->type.empty()) pp["type"] = p.placement_policy->type;
    if (!p.placement_policy->tpu_topology.empty()) pp["tpuTopology"] = p.placement_policy->tpu_topology;
    if (!p.placement_policy->policy_name.empty()) pp["policyName"] = p.placement_policy->policy_name;
    j["placementPolicy"] = pp;
  }
  if (p.autoscaling) j["autoscaling"] = AutoscalingJson(*p.autoscaling);
  // int64 in proto3 JSON: a decimal string.
  if (p.max_pods_per_node) j["maxPodsConstraint"] = {{"maxPodsPerNode", std::to_string(*p.max_pods_per_node)}};
  if (!p.additional_node_networks.empty()) {
    json nets = json::array();
    for (const auto& n : p.additional_node_networks)
      nets.push_back({{"network", n.network}, {"subnetwork", n.subnetwork}});
    j["networkConfig"] = {{"additionalNodeNetworkConfigs", nets}};
  }
  if (p.management) {
    j["management"] = {{"autoRepair", p.management->auto_repair}, {"autoUpgrade", p.management->auto_upgrade}};
  }
  if (p.version) j["version"] = *p.version;
  if (!p.locations.empty()) j["locations"] = p.locations;
  // Output-only fields, present when the value came from the API.
  if (!p.status.empty()) j["status"] = p.status;
  if (!p.status_message.empty()) j["statusMessage"] = p.status_message;
  if (!p.self_link.empty()) j["selfLink"] = p.self_link;
  if (!p.instance_group_urls.empty()) j["instanceGroupUrls"] = p.instance_group_urls;
  return j;
}

namespace {

// config: the node configuration of a pool.
void ReadNodeConfig(WireReader& r, const json& c, NodePool* p) {
  r.String(c, "machineType", &p->machine_type);
  r.Int(c, "diskSizeGb", &p->disk_size_gb);
  r.String(c, "diskType", &p->disk_type);
  r.String(c, "imageType", &p->image_type);
  r.String(c, "serviceAccount", &p->service_account);
  r.Strings(c, "oauthScopes", &p->oauth_scopes);
  r.StringMap(c, "labels", &p->labels);
  ReadTaints(r, c, &p->taints);
  r.StringMap(c, "resourceLabels", &p->resource_labels);
  r.Strings(c, "tags", &p->tags);
  r.StringMap(c, "metadata", &p->metadata);
  r.Bool(c, "spot", &p->spot);
  r.Bool(c, "flexStart", &p->flex_start);
  if (const json* ra = r.Object(c, "reservationAffinity")) {
    ReservationAffinity a;
    r.String(*ra, "consumeReservationType", &a.consume_reservation_type);
    r.String(*ra, "key", &a.key);
    r.Strings(*ra, "values", &a.values);
    p->reservation_affinity = std::move(a);
  }
  if (const json* sh = r.Object(c, "shieldedInstanceConfig")) {
    r.Bool(*sh, "enableSecureBoot", &p->secure_boot);
    r.Bool(*sh, "enableIntegrityMonitoring", &p->integrity_monitoring);
  }
  r.String(c, "bootDiskKmsKey", &p->boot_disk_kms_key);
  if (const json* disks = r.Array(c, "secondaryBootDisks")) {
    for (const auto& d : *disks) {
      SecondaryBootDisk disk;
      r.String(d, "diskImage", &disk.disk_image);
      r.String(d, "mode", &disk.mode);
      p->secondary_boot_disks.push_back(std::move(disk));
    }
  }
}

}  // namespace

Result<NodePool> NodePoolFromJson(const json& j) {
  NodePool p;
  WireReader r("node pool");
  if (!j.is_object()) return Status::InvalidArgument("node pool: expected a JSON object");
  r.String(j, "name", &p.name);
  if (const json* c = r.Object(j, "config")) ReadNodeConfig(r, *c, &p);
  if (const json* mp = r.Object(j, "maxPodsConstraint")) r.Int(*mp, "maxPodsPerNode", &p.max_pods_per_node);
  if (const json* nc = r.Object(j, "networkConfig")) {
    if (const json* nets = r.Array(*nc, "additionalNodeNetworkConfigs")) {
      for (const auto& n : *nets) {
        AdditionalNodeNetwork net;
        r.String(n, "network", &net.network);
        r.String(n, "subnetwork", &net.subnetwork);
        p.additional_node_networks.push_back(std::move(net));
      }
    }
  }
  r.Int(j, "initialNodeCount", &p.node_count);
  if (const json* pp = r.Object(j, "placementPolicy")) {
    PlacementPolicy policy;
    r.String(*pp, "type", &policy.type);
    if (policy.type == "TYPE_UNSPECIFIED") policy.type.clear();
    r.String(*pp, "tpuTopology", &policy.tpu_topology);
    r.String(*pp, "policyName", &policy.policy_name);
    p.placement_policy = std::move(policy);
  }
  if (const json* a = r.Object(j, "autoscaling")) {
    NodePoolAutoscaling as;
    r.Bool(*a, "enabled", &as.enabled);
    // The total_* bounds are the per-zone ones of a one-zone (TPU) pool.
    const bool total = !a->contains("minNodeCount") && !a->contains("maxNodeCount");
    r.Int(*a, total ? "totalMinNodeCount" : "minNodeCount", &as.min_node_count);
    r.Int(*a, total ? "totalMaxNodeCount" : "maxNodeCount", &as.max_node_count);
    r.String(*a, "locationPolicy", &as.location_policy);
    if (as.location_policy == "LOCATION_POLICY_UNSPECIFIED") as.location_policy.clear();
    p.autoscaling = as;
  }
  if (const json* m = r.Object(j, "management")) {
    NodeManagement mg;
    r.Bool(*m, "autoRepair", &mg.auto_repair);
    r.Bool(*m, "autoUpgrade", &mg.auto_upgrade);
    p.management = mg;
  }
  r.String(j, "version", &p.version);
  r.Strings(j, "locations", &p.locations);
  r.String(j, "status", &p.status);
  r.String(j, "statusMessage", &p.status_message);
  r.String(j, "selfLink", &p.self_link);
  r.Strings(j, "instanceGroupUrls", &p.instance_group_urls);
  if (!r.ok()) return r.status();
  return p;
}

json CreateNodePoolBody(const NodePool& pool) { return {{"nodePool", NodePoolToJson(pool)}}; }

json UpdateNodePoolBody(const NodePoolUpdate& u) {
  json j = json::object();
  if (u.labels) j["labels"] = {{"labels", MapJson(*u.labels)}};
  if (u.taints) j["taints"] = {{"taints", TaintsJson(*u.taints)}};
  if (u.resource_labels) j["resourceLabels"] = {{"labels", MapJson(*u.resource_labels)}};
  if (u.tags) j["tags"] = {{"tags", *u.tags}};
  if (u.node_version) j["nodeVersion"] = *u.node_version;
  if (u.image_type) j["imageType"] = *u.image_type;
  if (u.disk_size_gb) j["diskSizeGb"] = std::to_string(*u.disk_size_gb);  // int64: a string in JSON
  if (u.disk_type) j["diskType"] = *u.disk_type;
  if (u.locations) j["locations"] = *u.locations;
  return j;
}

json SetNodePoolSizeBody(int node_count) { return {{"nodeCount", node_count}}; }

json SetNodePoolAutoscalingBody(const NodePoolAutoscaling& a) {
  return {{"autoscaling", AutoscalingJson(a)}};
}

json SetNodePoolManagementBody(const NodeManagement& m) {
  return {{"management", {{"autoRepair", m.auto_repair}, {"autoUpgrade", m.auto_upgrade}}}};
}

Result<Cluster> ClusterFromJson(const json& j, const std::string& project) {
  if (!j.is_object()) return Status::InvalidArgument("cluster: expected a JSON object");
  Cluster c;
  WireReader r("cluster");
  r.String(j, "name", &c.name);
  r.String(j, "location", &c.location);
  if (c.location.empty()) r.String(j, "zone", &c.location);
  r.String(j, "status", &c.status);
  r.String(j, "selfLink", &c.self_link);
  if (const json* rc = r.Object(j, "releaseChannel")) r.String(*rc, "channel", &c.release_channel);
  if (c.release_channel == "UNSPECIFIED") c.release_channel.clear();
  if (!r.ok()) return r.status();
  c.project = project.empty() ? SegmentAfter(c.self_link, "projects") : project;
  if (const json* pools = r.Array(j, "nodePools")) {
    for (const auto& pj : *pools) {
      auto pool = NodePoolFromJson(pj);
      if (!pool.ok()) return pool.status().WithContext("cluster " + c.name);
      c.node_pools.push_back(std::move(*pool));
    }
  }
  if (!r.ok()) return r.status();
  return c;
}

Result<std::vector<Cluster>> ClusterListFromJson(const json& j, const std::string& project) {
  if (!j.is_object()) return Status::InvalidArgument("cluster list: expected a JSON object");
  WireReader r("cluster list");
  std::vector<std::string> missing;
  r.Strings(j, "missingZones", &missing);
  if (!missing.empty()) {
    std::string zones;
    for (const auto& z : missing) zones += (zones.empty() ? "" : ", ") + z;
    return Status::Unavailable("cluster list of project " + project + " is missing zones " + zones);
  }
  std::vector<Cluster> out;
  if (const json* a = r.Array(j, "clusters")) {
    for (const auto& cj : *a) {
      auto c = ClusterFromJson(cj, project);
      if (!c.ok()) return c.status();
      out.push_back(std::move(*c));
    }
  }
  if (!r.ok()) return r.status();
  return out;
}

Result<Operation> GkeOperationFromJson(const json& j, const std::string& project) {
  if (!j.is_object()) return Status::InvalidArgument("GKE operation: expected a JSON object");
  Operation op;
  op.api = Operation::Api::kGke;
  op.scope = "locations";
  WireReader r("GKE operation");
  r.String(j, "name", &op.name);
  r.String(j, "operationType", &op.operation_type);
  r.String(j, "status", &op.status);
  r.String(j, "targetLink", &op.target_link);
  r.String(j, "selfLink", &op.self_link);
  r.String(j, "location", &op.location);
  if (op.location.empty()) r.String(j, "zone", &op.location);
  if (op.location.empty()) op.location = SegmentAfter(op.self_link, "locations");
  if (op.location.empty()) op.location = SegmentAfter(op.self_link, "zones");
  op.project = project.empty() ? SegmentAfter(op.self_link, "projects") : project;
  std::string status_message;
  r.String(j, "statusMessage", &status_message);
  if (const json* e = r.Object(j, "error")) {
    r.Int(*e, "code", &op.error_code);
    r.String(*e, "message", &op.error_message);
    if (const json* details = r.Array(*e, "details")) {
      for (const auto& d : *details) {
        if (d.is_object() && d.contains("reason") && d["reason"].is_string()) {
          op.error_reason = d["reason"];
          break;
        }
      }
    }
  }
  for (const char* key : {"nodepoolConditions", "clusterConditions"}) {
    const json* conds = r.Array(j, key);
    if (!conds || !op.error_reason.empty()) continue;
    for (const auto& c : *conds) {
      std::string code;
      r.String(c, "code", &code);
      if (!code.empty() && code != "UNKNOWN") {
        op.error_reason = code;
        if (op.error_message.empty()) r.String(c, "message", &op.error_message);
        break;
      }
    }
  }
  // Older responses report a failure only in statusMessage.
  if (op.done() && op.error_message.empty() && op.error_code != 0) op.error_message = status_message;
  if (op.error_reason.empty()) op.error_reason = KnownFailureReason(op.error_message);
  if (!r.ok()) return r.status();
  return op;
}

json GkeOperationToJson(const Operation& op) {
  json j = {{"name", op.name}, {"operationType", op.operation_type}, {"status", op.status}};
  if (!op.location.empty()) j["location"] = op.location;
  if (!op.target_link.empty()) j["targetLink"] = op.target_link;
  if (!op.self_link.empty()) j["selfLink"] = op.self_link;
  if (op.error_code != 0 || !op.error_message.empty()) {
    j["error"] = {{"code", op.error_code}, {"message", op.error_message}};
    if (!op.error_reason.empty()) {
      j["error"]["details"] = json::array(
          {{{"@type", "type.googleapis.com/google.rpc.ErrorInfo"}, {"reason", op.error_reason}}});
    }
  }
  return j;
}

Result<std::vector<Operation>> GkeOperationListFromJson(const json& j, const std::string& project) {
  if (!j.is_object()) return Status::InvalidArgument("operation list: expected a JSON object");
  WireReader r("GKE operation list");
  std::vector<Operation> out;
  if (const json* a = r.Array(j, "operations")) {
    for (const auto& oj : *a) {
      auto op = GkeOperationFromJson(oj, project);
      if (!op.ok()) return op.status();
      out.push_back(std::move(*op));
    }
  }
  if (!r.ok()) return r.status();
  return out;
}

}  // namespace tpu::cloud
