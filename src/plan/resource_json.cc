// The plan document's resource bodies, both ways.
#include "plan/resource_json.h"

namespace tpu::plan {
namespace {

using nlohmann::json;

template <typename T>
void PutOpt(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
template <typename T>
void GetOpt(const json& j, const char* key, std::optional<T>& v) {
  if (j.contains(key)) v = j.at(key).get<T>();
}
template <typename T>
void Get(const json& j, const char* key, T& v) {
  if (j.contains(key)) v = j.at(key).get<T>();
}
void PutStr(json& j, const char* key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}

}  // namespace

json NodePoolToJson(const cloud::NodePool& p) {
  json j;
  j["name"] = p.name;
  j["machineType"] = p.machine_type;
  PutOpt(j, "diskSizeGb", p.disk_size_gb);
  PutOpt(j, "diskType", p.disk_type);
  PutOpt(j, "imageType", p.image_type);
  PutOpt(j, "serviceAccount", p.service_account);
  PutOpt(j, "oauthScopes", p.oauth_scopes);
  PutOpt(j, "labels", p.labels);
  if (p.taints) {
    json ts = json::array();
    for (const auto& t : *p.taints) ts.push_back({{"key", t.key}, {"value", t.value}, {"effect", t.effect}});
    j["taints"] = ts;
  }
  PutOpt(j, "resourceLabels", p.resource_labels);
  PutOpt(j, "tags", p.tags);
  PutOpt(j, "metadata", p.metadata);
  j["spot"] = p.spot;
  if (p.reservation_affinity) {
    const auto& r = *p.reservation_affinity;
    j["reservationAffinity"] = {{"consumeReservationType", r.consume_reservation_type},
                                {"key", r.key},
                                {"values", r.values}};
  }
  j["flexStart"] = p.flex_start;
  if (p.placement_policy) {
    json pp = json::object();
    PutStr(pp, "type", p.placement_policy->type);
    PutStr(pp, "tpuTopology", p.placement_policy->tpu_topology);
    PutStr(pp, "policyName", p.placement_policy->policy_name);
    j["placementPolicy"] = pp;
  }
  j["nodeCount"] = p.node_count;
  if (p.autoscaling) {
    j["autoscaling"] = {{"enabled", p.autoscaling->enabled},
                        {"minNodeCount", p.autoscaling->min_node_count},
                        {"maxNodeCount", p.autoscaling->max_node_count}};
    PutStr(j["autoscaling"], "locationPolicy", p.autoscaling->location_policy);
  }
  if (p.management)
    j["management"] = {{"autoRepair", p.management->auto_repair},
                       {"autoUpgrade", p.management->auto_upgrade}};
  PutOpt(j, "version", p.version);
  j["locations"] = p.locations;
  PutStr(j, "status", p.status);
  PutStr(j, "statusMessage", p.status_message);
  PutStr(j, "selfLink", p.self_link);
  if (!p.instance_group_urls.empty()) j["instanceGroupUrls"] = p.instance_group_urls;
  return j;
}

cloud::NodePool NodePoolFromJson(const json& j) {
  cloud::NodePool p;
  p.name = j.at("name").get<std::string>();
  Get(j, "machineType", p.machine_type);
  GetOpt(j, "diskSizeGb", p.disk_size_gb);
  GetOpt(j, "diskType", p.disk_type);
  GetOpt(j, "imageType", p.image_type);
  GetOpt(j, "serviceAccount", p.service_account);
  GetOpt(j, "oauthScopes", p.oauth_scopes);
  GetOpt(j, "labels", p.labels);
  if (j.contains("taints")) {
    std::vector<cloud::NodeTaint> ts;
    for (const auto& t : j.at("taints"))
      ts.push_back({t.at("key").get<std::string>(), t.value("value", ""), t.at("effect").get<std::string>()});
    p.taints = std::move(ts);
  }
  GetOpt(j, "resourceLabels", p.resource_labels);
  GetOpt(j, "tags", p.tags);
  GetOpt(j, "metadata", p.metadata);
  Get(j, "spot", p.spot);
  if (j.contains("reservationAffinity")) {
    const auto& r = j.at("reservationAffinity");
    cloud::ReservationAffinity ra;
    Get(r, "consumeReservationType", ra.consume_reservation_type);
    Get(r, "key", ra.key);
    Get(r, "values", ra.values);
    p.reservation_affinity = std::move(ra);
  }
  Get(j, "flexStart", p.flex_start);
  if (j.contains("placementPolicy")) {
    const auto& pp = j.at("placementPolicy");
    cloud::PlacementPolicy v;
    Get(pp, "type", v.type);
    Get(pp, "tpuTopology", v.tpu_topology);
    Get(pp, "policyName", v.policy_name);
    p.placement_policy = v;
  }
  Get(j, "nodeCount", p.node_count);
  if (j.contains("autoscaling")) {
    const auto& a = j.at("autoscaling");
    cloud::NodePoolAutoscaling v;
    Get(a, "enabled", v.enabled);
    Get(a, "minNodeCount", v.min_node_count);
    Get(a, "maxNodeCount", v.max_node_count);
    Get(a, "locationPolicy", v.location_policy);
    p.autoscaling = v;
  }
  if (j.contains("management")) {
    const auto& m = j.at("management");
    cloud::NodeManagement v;
    Get(m, "autoRepair", v.auto_repair);
    Get(m, "autoUpgrade", v.auto_upgrade);
    p.management = v;
  }
  GetOpt(j, "version", p.version);
  Get(j, "locations", p.locations);
  Get(j, "status", p.status);
  Get(j, "statusMessage", p.status_message);
  Get(j, "selfLink", p.self_link);
  Get(j, "instanceGroupUrls", p.instance_group_urls);
  return p;
}

json WorkloadPolicyToJson(const cloud::WorkloadPolicy& p) {
  json j = {{"name", p.name}, {"region", p.region}, {"type", p.type},
            {"acceleratorTopology", p.accelerator_topology}, {"description", p.description}};
  PutStr(j, "acceleratorTopologyMode", p.accelerator_topology_mode);
  PutStr(j, "status", p.status);
  PutStr(j, "selfLink", p.self_link);
  return j;
}

cloud::WorkloadPolicy WorkloadPolicyFromJson(const json& j) {
  cloud::WorkloadPolicy p;
  p.name = j.at("name").get<std::string>();
  Get(j, "region", p.region);
  Get(j, "type", p.type);
  Get(j, "acceleratorTopology", p.accelerator_topology);
  Get(j, "acceleratorTopologyMode", p.accelerator_topology_mode);
  Get(j, "description", p.description);
  Get(j, "status", p.status);
  Get(j, "selfLink", p.self_link);
  return p;
}

json InstanceTemplateToJson(const cloud::InstanceTemplate& t) {
  json j = {{"name", t.name},
            {"description", t.description},
            {"machineType", t.machine_type},
            {"provisioningModel", t.provisioning_model},
            {"serviceAccounts", t.service_accounts},
            {"networkTags", t.network_tags},
            {"metadata", t.metadata}};
  PutStr(j, "reservation", t.reservation);
  PutStr(j, "sourceImage", t.source_image);
  PutStr(j, "subnetwork", t.subnetwork);
  PutOpt(j, "bootDiskSizeGb", t.boot_disk_size_gb);
  PutOpt(j, "diskType", t.disk_type);
  PutStr(j, "onHostMaintenance", t.on_host_maintenance);
  PutStr(j, "instanceTerminationAction", t.instance_termination_action);
  PutStr(j, "selfLink", t.self_link);
  return j;
}

cloud::InstanceTemplate InstanceTemplateFromJson(const json& j) {
  cloud::InstanceTemplate t;
  t.name = j.at("name").get<std::string>();
  Get(j, "description", t.description);
  Get(j, "machineType", t.machine_type);
  Get(j, "provisioningModel", t.provisioning_model);
  Get(j, "reservation", t.reservation);
  Get(j, "sourceImage", t.source_image);
  Get(j, "subnetwork", t.subnetwork);
  GetOpt(j, "bootDiskSizeGb", t.boot_disk_size_gb);
  GetOpt(j, "diskType", t.disk_type);
  Get(j, "serviceAccounts", t.service_accounts);
  Get(j, "networkTags", t.network_tags);
  Get(j, "metadata", t.metadata);
  Get(j, "onHostMaintenance", t.on_host_maintenance);
  Get(j, "instanceTerminationAction", t.instance_termination_action);
  Get(j, "selfLink", t.self_link);
  return t;
}

json InstanceGroupManagerToJson(const cloud::InstanceGroupManager& g) {
  json j = {{"name", g.name},
            {"zone", g.zone},
            {"description", g.description},
            {"instanceTemplate", g.instance_template},
            {"baseInstanceName", g.base_instance_name},
            {"targetSize", g.target_size},
            {"targetSizePolicyMode", g.target_size_policy_mode}};
  PutStr(j, "workloadPolicy", g.workload_policy);
  PutStr(j, "status", g.status);
  PutStr(j, "selfLink", g.self_link);
  return j;
}

cloud::InstanceGroupManager InstanceGroupManagerFromJson(const json& j) {
  cloud::InstanceGroupManager g;
  g.name = j.at("name").get<std::string>();
  Get(j, "zone", g.zone);
  Get(j, "description", g.description);
  Get(j, "instanceTemplate", g.instance_template);
  Get(j, "baseInstanceName", g.base_instance_name);
  Get(j, "targetSize", g.target_size);
  Get(j, "targetSizePolicyMode", g.target_size_policy_mode);
  Get(j, "workloadPolicy", g.workload_policy);
  Get(j, "status", g.status);
  Get(j, "selfLink", g.self_link);
  return g;
}

}  // namespace tpu::plan
