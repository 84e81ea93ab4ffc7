// Compute v1 JSON mapping of workload policies, instance templates, managed
// instance groups and operations.
#include "cloud/compute_wire.h"

#include "cloud/wire_reader.h"

namespace tpu::cloud {
namespace {

using nlohmann::json;

constexpr const char* kReservationKey = "compute.googleapis.com/reservation-name";

}  // namespace

std::string LastSegment(const std::string& url) {
  auto slash = url.find_last_of('/');
  return slash == std::string::npos ? url : url.substr(slash + 1);
}

std::string SegmentAfter(const std::string& url, const std::string& key) {
  std::string needle = "/" + key + "/";
  size_t start;
  if (url.rfind(key + "/", 0) == 0) {
    start = key.size() + 1;
  } else {
    auto p = url.find(needle);
    if (p == std::string::npos) return "";
    start = p + needle.size();
  }
  auto end = url.find_first_of("/?", start);
  return url.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

void SetOperationScope(const std::string& zone, const std::string& region, const std::string& project,
                       Operation* op) {
  if (!zone.empty()) {
    op->scope = "zones";
    op->location = LastSegment(zone);
  } else if (!region.empty()) {
    op->scope = "regions";
    op->location = LastSegment(region);
  } else {
    op->scope = "global";
  }
  op->project = project.empty() ? SegmentAfter(op->self_link, "projects") : project;
}

json WorkloadPolicyToJson(const WorkloadPolicy& p) {
  json wp = {{"type", p.type}};
  if (!p.accelerator_topology.empty()) wp["acceleratorTopology"] = p.accelerator_topology;
  if (!p.accelerator_topology_mode.empty()) wp["acceleratorTopologyMode"] = p.accelerator_topology_mode;
  json j = {{"name", p.name}, {"workloadPolicy", wp}};
  if (!p.description.empty()) j["description"] = p.description;
  if (!p.region.empty()) j["region"] = p.region;
  if (!p.status.empty()) j["status"] = p.status;
  if (!p.self_link.empty()) j["selfLink"] = p.self_link;
  return j;
}

bool IsWorkloadPolicyJson(const json& j) {
  return j.is_object() && j.contains("workloadPolicy") && j["workloadPolicy"].is_object();
}

Result<WorkloadPolicy> WorkloadPolicyFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("resource policy: expected a JSON object");
  WorkloadPolicy p;
  WireReader r("resource policy");
  r.String(j, "name", &p.name);
  r.String(j, "region", &p.region);
  p.region = LastSegment(p.region);
  r.String(j, "description", &p.description);
  r.String(j, "status", &p.status);
  r.String(j, "selfLink", &p.self_link);
  if (const json* wp = r.Object(j, "workloadPolicy")) {
    r.String(*wp, "type", &p.type);
    r.String(*wp, "acceleratorTopology", &p.accelerator_topology);
    r.String(*wp, "acceleratorTopologyMode", &p.accelerator_topology_mode);
  }
  if (!r.ok()) return r.status();
  return p;
}

json InstanceTemplateToJson(const InstanceTemplate& t) {
  json props = json::object();
  if (!t.machine_type.empty()) props["machineType"] = t.machine_type;
  json scheduling = json::object();
  if (!t.provisioning_model.empty()) scheduling["provisioningModel"] = t.provisioning_model;
  // Compute requires automaticRestart false for SPOT.
  if (t.provisioning_model == "SPOT") scheduling["automaticRestart"] = false;
  if (!t.on_host_maintenance.empty()) scheduling["onHostMaintenance"] = t.on_host_maintenance;
  if (!t.instance_termination_action.empty())
    scheduling["instanceTerminationAction"] = t.instance_termination_action;
  if (!scheduling.empty()) props["scheduling"] = scheduling;
  if (!t.reservation.empty()) {
    props["reservationAffinity"] = {{"consumeReservationType", "SPECIFIC_RESERVATION"},
                                    {"key", kReservationKey},
                                    {"values", json::array({t.reservation})}};
  }
  json init = json::object();
  if (!t.source_image.empty()) init["sourceImage"] = t.source_image;
  // int64 in proto3 JSON is a string.
  if (t.boot_disk_size_gb) init["diskSizeGb"] = std::to_string(*t.boot_disk_size_gb);
  if (t.disk_type) init["diskType"] = *t.disk_type;
  props["disks"] = json::array({{{"boot", true}, {"autoDelete", true}, {"type", "PERSISTENT"}, {"initializeParams", init}}});
  if (!t.subnetwork.empty()) props["networkInterfaces"] = json::array({{{"subnetwork", t.subnetwork}}});
  if (!t.service_accounts.empty()) {
    json sas = json::array();
    for (const auto& email : t.service_accounts) {
      sas.push_back({{"email", email}, {"scopes", json::array({"https://www.googleapis.com/auth/cloud-platform"})}});
    }
    props["serviceAccounts"] = sas;
  }
  if (!t.network_tags.empty()) props["tags"] = {{"items", t.network_tags}};
  if (!t.metadata.empty()) {
    json items = json::array();
    for (const auto& [k, v] : t.metadata) items.push_back({{"key", k}, {"value", v}});
    props["metadata"] = {{"items", items}};
  }
  json j = {{"name", t.name}, {"properties", props}};
  if (!t.description.empty()) j["description"] = t.description;
  if (!t.self_link.empty()) j["selfLink"] = t.self_link;
  return j;
}

Result<InstanceTemplate> InstanceTemplateFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("instance template: expected a JSON object");
  InstanceTemplate t;
  WireReader r("instance template");
  r.String(j, "name", &t.name);
  r.String(j, "description", &t.description);
  r.String(j, "selfLink", &t.self_link);
  if (const json* p = r.Object(j, "properties")) {
    r.String(*p, "machineType", &t.machine_type);
    if (const json* s = r.Object(*p, "scheduling")) {
      r.String(*s, "provisioningModel", &t.provisioning_model);
      r.String(*s, "onHostMaintenance", &t.on_host_maintenance);
      r.String(*s, "instanceTerminationAction", &t.instance_termination_action);
    }
    if (const json* ra = r.Object(*p, "reservationAffinity")) {
      std::vector<std::string> values;
      r.Strings(*ra, "values", &values);
      if (!values.empty()) t.reservation = values.front();
    }
    if (const json* disks = r.Array(*p, "disks")) {
      for (const auto& d : *disks) {
        bool boot = false;
        r.Bool(d, "boot", &boot);
        if (!boot && disks->size() > 1) continue;
        if (const json* init = r.Object(d, "initializeParams")) {
          r.String(*init, "sourceImage", &t.source_image);
          r.Int(*init, "diskSizeGb", &t.boot_disk_size_gb);
          r.String(*init, "diskType", &t.disk_type);
        }
        break;
      }
    }
    if (const json* nics = r.Array(*p, "networkInterfaces"); nics && !nics->empty()) {
      r.String(nics->front(), "subnetwork", &t.subnetwork);
    }
    if (const json* sas = r.Array(*p, "serviceAccounts")) {
      for (const auto& sa : *sas) {
        std::string email;
        r.String(sa, "email", &email);
        if (!email.empty()) t.service_accounts.push_back(email);
      }
    }
    if (const json* tags = r.Object(*p, "tags")) r.Strings(*tags, "items", &t.network_tags);
    if (const json* md = r.Object(*p, "metadata")) {
      if (const json* items = r.Array(*md, "items")) {
        for (const auto& item : *items) {
          std::string k, v;
          r.String(item, "key", &k);
          r.String(item, "value", &v);
          t.metadata[k] = v;
        }
      }
    }
  }
  if (!r.ok()) return r.status();
  return t;
}

Result<Reservation> ReservationFromJson(const json& j, const std::string& project) {
  if (!j.is_object()) return Status::InvalidArgument("reservation: expected a JSON object");
  Reservation res;
  WireReader r("reservation");
  r.String(j, "name", &res.name);
  r.String(j, "zone", &res.zone);
  res.zone = LastSegment(res.zone);
  r.String(j, "selfLink", &res.self_link);
  res.project = SegmentAfter(res.self_link, "projects");
  if (res.project.empty()) res.project = project;
  r.String(j, "status", &res.status);
  r.Bool(j, "specificReservationRequired", &res.specific_reservation_required);
  if (const json* sr = r.Object(j, "specificReservation")) {
    r.Int(*sr, "count", &res.count);
    r.Int(*sr, "inUseCount", &res.in_use_count);
    if (const json* props = r.Object(*sr, "instanceProperties"))
      r.String(*props, "machineType", &res.machine_type);
  }
  if (const json* share = r.Object(j, "shareSettings")) {
    r.String(*share, "shareType", &res.share_type);
    if (const json* pm = r.Object(*share, "projectMap"))
      for (const auto& [key, unused] : pm->items()) res.shared_with.push_back(key);
  }
  r.String(j, "deploymentType", &res.deployment_type);
  if (const json* rs = r.Object(j, "resourceStatus")) r.Int(*rs, "reservationBlockCount", &res.block_count);
  if (!r.ok()) return r.status();
  return res;
}

json InstanceGroupManagerToJson(const InstanceGroupManager& m) {
  json j = {{"name", m.name}, {"targetSize", m.target_size}};
  if (!m.description.empty()) j["description"] = m.description;
  if (!m.instance_template.empty()) j["instanceTemplate"] = m.instance_template;
  j["baseInstanceName"] = m.base_instance_name.empty() ? m.name : m.base_instance_name;
  if (!m.target_size_policy_mode.empty()) j["targetSizePolicy"] = {{"mode", m.target_size_policy_mode}};
  if (!m.workload_policy.empty()) j["resourcePolicies"] = {{"workloadPolicy", m.workload_policy}};
  if (!m.zone.empty()) j["zone"] = m.zone;
  if (!m.status.empty()) j["status"] = {{"isStable", m.status == "STABLE"}};
  if (!m.self_link.empty()) j["selfLink"] = m.self_link;
  return j;
}

Result<InstanceGroupManager> InstanceGroupManagerFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("instance group manager: expected a JSON object");
  InstanceGroupManager m;
  WireReader r("instance group manager");
  r.String(j, "name", &m.name);
  r.String(j, "zone", &m.zone);
  m.zone = LastSegment(m.zone);
  r.String(j, "description", &m.description);
  r.String(j, "instanceTemplate", &m.instance_template);
  r.String(j, "baseInstanceName", &m.base_instance_name);
  r.Int(j, "targetSize", &m.target_size);
  if (const json* p = r.Object(j, "targetSizePolicy")) r.String(*p, "mode", &m.target_size_policy_mode);
  if (const json* p = r.Object(j, "resourcePolicies")) r.String(*p, "workloadPolicy", &m.workload_policy);
  if (const json* s = r.Object(j, "status")) {
    bool stable = false;
    r.Bool(*s, "isStable", &stable);
    m.status = stable ? "STABLE" : "UPDATING";
  }
  if (const json* a = r.Object(j, "currentActions")) {
    r.Int(*a, "creating", &m.current_actions.creating);
    r.Int(*a, "creatingWithoutRetries", &m.current_actions.creating_without_retries);
    r.Int(*a, "deleting", &m.current_actions.deleting);
    r.Int(*a, "none", &m.current_actions.none);
    r.Int(*a, "recreating", &m.current_actions.recreating);
    r.Int(*a, "verifying", &m.current_actions.verifying);
  }
  r.String(j, "selfLink", &m.self_link);
  if (!r.ok()) return r.status();
  return m;
}

Result<ManagedInstance> ManagedInstanceFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("managed instance: expected a JSON object");
  ManagedInstance m;
  WireReader r("managed instance");
  r.String(j, "name", &m.name);
  r.String(j, "instance", &m.instance);
  r.String(j, "instanceStatus", &m.instance_status);
  r.String(j, "currentAction", &m.current_action);
  // ManagedInstanceLastAttempt.errors is a ManagedInstanceLastAttemptErrors,
  // whose own `errors` is the list: lastAttempt.errors.errors[].
  if (const json* last = r.Object(j, "lastAttempt")) {
    if (const json* wrapper = r.Object(*last, "errors")) {
      if (const json* errors = r.Array(*wrapper, "errors")) {
        for (const auto& e : *errors) {
          std::string code, message;
          r.String(e, "code", &code);
          r.String(e, "message", &message);
          m.errors.push_back(message.empty() ? code : code + ": " + message);
        }
      }
    }
  }
  if (!r.ok()) return r.status();
  return m;
}

Result<Instance> InstanceFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("instance: expected a JSON object");
  Instance in;
  WireReader r("instance");
  r.String(j, "name", &in.name);
  r.String(j, "zone", &in.zone);
  in.zone = LastSegment(in.zone);
  r.String(j, "status", &in.status);
  if (const json* md = r.Object(j, "metadata")) {
    r.String(*md, "fingerprint", &in.metadata_fingerprint);
    if (const json* items = r.Array(*md, "items")) {
      for (const auto& item : *items) {
        std::string k, v;
        r.String(item, "key", &k);
        r.String(item, "value", &v);
        in.metadata.emplace_back(std::move(k), std::move(v));
      }
    }
  }
  if (!r.ok()) return r.status();
  return in;
}

json InstanceMetadataToJson(const std::string& fingerprint,
                            const std::vector<std::pair<std::string, std::string>>& items) {
  json list = json::array();
  for (const auto& [k, v] : items) list.push_back({{"key", k}, {"value", v}});
  json j = {{"items", list}};
  // An empty fingerprint is left out, and the API refuses it with a 412.
  if (!fingerprint.empty()) j["fingerprint"] = fingerprint;
  return j;
}

Result<Operation> ComputeOperationFromJson(const json& j, const std::string& project) {
  if (!j.is_object()) return Status::InvalidArgument("Compute operation: expected a JSON object");
  Operation op;
  op.api = Operation::Api::kCompute;
  WireReader r("Compute operation");
  r.String(j, "name", &op.name);
  r.String(j, "operationType", &op.operation_type);
  r.String(j, "status", &op.status);
  r.String(j, "targetLink", &op.target_link);
  r.String(j, "selfLink", &op.self_link);
  std::string zone, region;
  r.String(j, "zone", &zone);
  r.String(j, "region", &region);
  SetOperationScope(zone, region, project, &op);
  r.Int(j, "httpErrorStatusCode", &op.error_code);
  if (const json* e = r.Object(j, "error")) {
    if (const json* errors = r.Array(*e, "errors"); errors && !errors->empty()) {
      r.String(errors->front(), "code", &op.error_reason);
      r.String(errors->front(), "message", &op.error_message);
    }
    if (op.error_message.empty()) r.String(j, "httpErrorMessage", &op.error_message);
    if (op.error_message.empty()) op.error_message = op.error_reason.empty() ? "operation failed" : op.error_reason;
  }
  if (!r.ok()) return r.status();
  return op;
}

json ComputeOperationToJson(const Operation& op) {
  json j = {{"kind", "compute#operation"}, {"name", op.name}, {"operationType", op.operation_type},
            {"status", op.status}};
  if (!op.target_link.empty()) j["targetLink"] = op.target_link;
  if (!op.self_link.empty()) j["selfLink"] = op.self_link;
  if (op.scope == "zones") j["zone"] = "projects/" + op.project + "/zones/" + op.location;
  if (op.scope == "regions") j["region"] = "projects/" + op.project + "/regions/" + op.location;
  if (op.failed()) {
    j["error"] = {{"errors", json::array({{{"code", op.error_reason}, {"message", op.error_message}}})}};
    if (op.error_code != 0) j["httpErrorStatusCode"] = op.error_code;
  }
  return j;
}

}  // namespace tpu::cloud
