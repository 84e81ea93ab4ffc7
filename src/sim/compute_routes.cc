// Compute resource routes and the dispatch of /compute/v1/ paths:
//   regions/R/resourcePolicies[/N]          GET list, POST insert, GET, DELETE
//   global/instanceTemplates[/N]            same
//   zones/Z/instanceGroupManagers[/N]       same, + POST …/N/resize?size=K,
//                                           POST …/N/listManagedInstances
//   zones/Z/instances/N                     GET, DELETE, POST …/N/setMetadata
//   zones/Z/reservations[/N]                GET list, GET (compute_reservations.h)
//   aggregated/{resourcePolicies,instanceTemplates,instanceGroupManagers,operations,reservations}
//   {zones/Z,regions/R,global}/operations[/O]   GET (POST …/O/wait is served by the emulator)
// Inserted resources exist at once (as in GCE, where a GET right after insert
// finds them); deletes take effect when their operation ends. A MIG's
// instances come and go with it (compute_instances.h).
#include <algorithm>
#include <cctype>
#include <optional>

#include "sim/api_schema.h"
#include "sim/cloud_errors.h"
#include "sim/cloud_operations.h"
#include "sim/compute_instances.h"
#include "sim/compute_reservations.h"
#include "sim/compute_routes.h"

namespace tpu::sim {

std::string ComputeUrl(const std::string& path) {
  return "https://www.googleapis.com/compute/v1/" + path;
}

std::string ComputeOperationKey(const SimRequest& req) {
  const auto& s = req.segments;  // compute v1 projects P (zones Z|regions R|global) operations O [wait]
  if (s.size() < 6 || s[0] != "compute" || s[2] != "projects") return "";
  size_t i = s[4] == "global" ? 5 : 6;
  if (s.size() < i + 2 || s[i] != "operations") return "";
  std::string key = "projects/" + s[3] + "/" + s[4];
  if (s[4] != "global") key += "/" + s[5];
  return key + "/operations/" + s[i + 1];
}

namespace {

struct Kind {
  const char* collection;
  const char* scope_kind;   // "regions", "global", "zones"
  const char* message;      // proto message of the resource
  const char* body_field;   // proto name of the insert body field
  const char* kind;
};

constexpr Kind kKinds[] = {
    {"resourcePolicies", "regions", "google.cloud.compute.v1.ResourcePolicy",
     "resource_policy_resource", "compute#resourcePolicy"},
    {"instanceTemplates", "global", "google.cloud.compute.v1.InstanceTemplate",
     "instance_template_resource", "compute#instanceTemplate"},
    {"instanceGroupManagers", "zones", "google.cloud.compute.v1.InstanceGroupManager",
     "instance_group_manager_resource", "compute#instanceGroupManager"},
};

bool ValidName(const std::string& n) {
  if (n.empty() || n.size() > 63 || !std::islower(static_cast<unsigned char>(n[0]))) return false;
  for (char c : n)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-'))
      return false;
  return n.back() != '-';
}

SimResponse OperationResponse(const OpRecord& op) { return OkResponse(op.wire); }

// The relative path ("projects/P/…") of a resource a request refers to by
// full URL, by relative path, or by a path within the project ("global/…").
std::string RelativePath(const std::string& project, const std::string& ref) {
  auto at = ref.find("projects/");
  return at == std::string::npos ? "projects/" + project + "/" + ref : ref.substr(at);
}

// A MIG's workload policy (resourcePolicies.workloadPolicy, a URL) must be a
// workload policy of the group's region; bulk mode takes only templates whose
// provisioning model is reservation-bound or flex-start (Compute's "Create a
// MIG that uses the bulk mode").
std::optional<ApiError> CheckGroupPolicies(SimContext& ctx, const std::string& project,
                                           const std::string& scope, const json& mig,
                                           const json& tmpl) {
  const std::string wp = mig.value("resourcePolicies", json::object()).value("workloadPolicy", "");
  if (!wp.empty()) {
    const std::string key = RelativePath(project, wp);
    auto it = ctx.state.compute.find(key);
    const std::string zone = scope.substr(scope.find('/') + 1);
    const std::string region = zone.substr(0, zone.rfind('-'));
    if (it == ctx.state.compute.end() || !it->second.contains("workloadPolicy"))
      return BadRequest("Invalid value for field 'resource.resourcePolicies.workloadPolicy': '" + wp +
                        "'. The referenced workload policy does not exist.");
    if (key.find("/regions/" + region + "/") == std::string::npos)
      return BadRequest("Invalid value for field 'resource.resourcePolicies.workloadPolicy': '" + wp +
                        "'. The workload policy must be in region " + region + ".");
  }
  const std::string mode = mig.value("targetSizePolicy", json::object()).value("mode", "");
  const std::string model = tmpl.value("properties", json::object())
                                .value("scheduling", json::object())
                                .value("provisioningModel", "STANDARD");
  if (mode == "BULK" && model != "RESERVATION_BOUND" && model != "FLEX_START")
    return BadRequest("Invalid value for field 'resource.targetSizePolicy.mode': 'BULK'. Bulk mode "
                      "requires an instance template with provisioning model RESERVATION_BOUND or "
                      "FLEX_START, got " + model + ".");
  return std::nullopt;
}

std::optional<ApiError> CheckInsert(SimContext& ctx, const Kind& k, const std::string& project,
                                    const std::string& scope, json& r) {
  const std::string name = r.value("name", "");
  if (!ValidName(name)) {
    return BadRequest("Invalid value for field 'resource.name': '" + name +
                      "'. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'");
  }
  const std::string coll = k.collection;
  if (coll == "resourcePolicies") {
    if (!r.contains("workloadPolicy") && !r.contains("groupPlacementPolicy") &&
        !r.contains("snapshotSchedulePolicy") && !r.contains("instanceSchedulePolicy"))
      return BadRequest("Invalid value for field 'resource': ''. A resource policy must specify a policy.");
    r["status"] = "READY";
    r["region"] = ComputeUrl("projects/" + project + "/" + scope);
  } else if (coll == "instanceTemplates") {
    const json props = r.value("properties", json::object());
    if (props.value("machineType", "").empty())
      return BadRequest("Invalid value for field 'resource.properties.machineType': ''. "
                        "Machine type must be specified.");
    // InstanceProperties.resource_policies: "Resource policies (names, not URLs)".
    const json policies = props.value("resourcePolicies", json::array());
    for (size_t i = 0; i < policies.size(); ++i) {
      const std::string v = policies[i].is_string() ? policies[i].get<std::string>() : "";
      if (v.find('/') != std::string::npos)
        return BadRequest("Invalid value for field 'resource.properties.resourcePolicies[" +
                          std::to_string(i) + "]': '" + v +
                          "'. Instance templates name resource policies, not their URLs.");
    }
  } else {
    const std::string tmpl = RelativePath(project, r.value("instanceTemplate", ""));
    auto t = ctx.state.compute.find(tmpl);
    if (t == ctx.state.compute.end()) {
      return BadRequest("Invalid value for field 'resource.instanceTemplate': '" +
                        r.value("instanceTemplate", "") +
                        "'. The referenced instance template does not exist.");
    }
    if (auto e = CheckGroupPolicies(ctx, project, scope, r, t->second)) return e;
    const int size = r.value("targetSize", 0);
    if (size < 0) return BadRequest("Invalid value for field 'resource.targetSize': '" +
                                    std::to_string(size) + "'. Must be greater than or equal to 0.");
    r["targetSize"] = size;
    r["instanceTemplate"] = ComputeUrl(tmpl);
    r["zone"] = ComputeUrl("projects/" + project + "/" + scope);
    r["instanceGroup"] = ComputeUrl("projects/" + project + "/" + scope + "/instanceGroups/" + name);
    if (!r.contains("baseInstanceName")) r["baseInstanceName"] = name;
    r["fingerprint"] = "42WmSpB8rSM=";
    if (!r.contains("listManagedInstancesResults")) r["listManagedInstancesResults"] = "PAGELESS";
    r["status"] = {{"isStable", false},
                   {"versionTarget", {{"isReached", true}}},
                   {"stateful", {{"hasStatefulConfig", false},
                                 {"perInstanceConfigs", {{"allEffective", true}}}}}};
    r["currentActions"] = {{"none", 0}, {"creating", size}, {"creatingWithoutRetries", 0},
                           {"verifying", 0}, {"recreating", 0}, {"deleting", 0},
                           {"abandoning", 0}, {"restarting", 0}, {"refreshing", 0},
                           {"suspending", 0}, {"resuming", 0}, {"stopping", 0}, {"starting", 0}};
    if (!r.contains("updatePolicy")) {
      r["updatePolicy"] = {{"type", "OPPORTUNISTIC"}, {"minimalAction", "REPLACE"},
                           {"replacementMethod", "SUBSTITUTE"},
                           {"maxSurge", {{"fixed", 1}, {"calculated", 1}}},
                           {"maxUnavailable", {{"fixed", 1}, {"calculated", 1}}}};
    }
  }
  return std::nullopt;
}

SimResponse Insert(SimContext& ctx, const SimRequest& req, const Kind& k, const std::string& project,
                   const std::string& scope) {
  if (auto err = ApiSchema::Builtin().Validate(req.parsed, k.message, k.body_field))
    return ErrorResponse(BadRequest(*err));
  json r = req.parsed.is_object() ? req.parsed : json::object();
  if (auto err = CheckInsert(ctx, k, project, scope, r)) return ErrorResponse(*err);
  const std::string path = "projects/" + project + "/" + scope + "/" + k.collection + "/" +
                           r["name"].get<std::string>();
  if (ctx.state.compute.count(path)) return ErrorResponse(ComputeAlreadyExists(path));
  const std::string id = NextComputeId(ctx);
  r["kind"] = k.kind;
  r["id"] = id;
  r["creationTimestamp"] = Rfc3339(ctx.now_ms);
  r["selfLink"] = ComputeUrl(path);
  ctx.state.compute[path] = r;
  const bool mig = std::string(k.collection) == "instanceGroupManagers";
  ComputeOpSpec spec{project, scope, "insert", ComputeUrl(path), id,
                     mig ? OpEffect::kMigStable : OpEffect::kNone, path};
  OpRecord& op = StartComputeOperation(ctx, spec);
  if (mig) CreateGroupInstances(ctx, path, r, r.value("targetSize", 0), ComputeOpKey(op));
  return OperationResponse(op);
}

SimResponse Delete(SimContext& ctx, const std::string& project, const std::string& scope,
                   const std::string& path, const json& resource) {
  // GCE refuses to delete a template or policy a group still uses.
  for (const auto& [key, other] : ctx.state.compute) {
    if (other.value("instanceTemplate", "") == ComputeUrl(path)) {
      return ErrorResponse(ApiError{400, "FAILED_PRECONDITION", "resourceInUseByAnotherResource",
                                    "The instance_template resource '" + path +
                                        "' is already being used by '" + key + "'"});
    }
  }
  ComputeOpSpec spec{project, scope, "delete", ComputeUrl(path), resource.value("id", ""),
                     OpEffect::kDeleteCompute, path};
  OpRecord& op = StartComputeOperation(ctx, spec);
  if (path.find("/instanceGroupManagers/") != std::string::npos)
    RemoveGroupInstances(ctx, path, ComputeOpKey(op));
  return OperationResponse(op);
}

SimResponse Resize(SimContext& ctx, const SimRequest& req, const std::string& project,
                   const std::string& scope, const std::string& path, json& mig) {
  const std::string size = req.Query("size");
  if (size.empty() || size.find_first_not_of("0123456789") != std::string::npos) {
    return ErrorResponse(BadRequest("Invalid value for field 'size': '" + size +
                                    "'. Must be greater than or equal to 0."));
  }
  const int target = std::stoi(size);
  mig["targetSize"] = target;
  ComputeOpSpec spec{project, scope, "compute.instanceGroupManagers.resize", ComputeUrl(path),
                     mig.value("id", ""), OpEffect::kMigStable, path};
  OpRecord& op = StartComputeOperation(ctx, spec);
  ResizeGroupInstances(ctx, path, mig, target, ComputeOpKey(op));
  CountGroupActions(ctx.state, path, mig);
  mig["status"]["isStable"] = false;  // the group itself is being modified
  return OperationResponse(op);
}

}  // namespace

SimResponse HandleCompute(SimContext& ctx, const SimRequest& req) {
  const auto& s = req.segments;  // compute v1 projects P …
  auto not_found = [&] {
    return ErrorResponse(NotFound("The requested URL " + req.path + " was not found."));
  };
  if (s.size() < 6 || s[1] != "v1" || s[2] != "projects") return not_found();
  const std::string& project = s[3];
  if (s[4] == "aggregated" && s.size() == 6 && req.method == "GET") {
    for (const char* c : {"resourcePolicies", "instanceTemplates", "instanceGroupManagers", "operations"})
      if (s[5] == c) return ComputeAggregatedList(ctx, req, project, s[5]);
    if (s[5] == "reservations") return ReservationsAggregatedList(ctx, req, project);
    return not_found();
  }
  // SCOPE is "global" or "zones/Z" / "regions/R".
  size_t i = 5;
  std::string scope = s[4];
  if (s[4] == "zones" || s[4] == "regions") {
    if (s.size() < 7) return not_found();
    scope += "/" + s[5];
    i = 6;
  } else if (s[4] != "global") {
    return not_found();
  }
  const std::string& collection = s[i];
  if (collection == "instances" && s[4] == "zones" && (s.size() == i + 2 || s.size() == i + 3))
    return HandleInstance(ctx, req, project, scope, s[i + 1], s.size() == i + 3 ? s[i + 2] : "");
  if (collection == "reservations" && s[4] == "zones" && req.method == "GET" &&
      (s.size() == i + 1 || s.size() == i + 2))
    return HandleReservations(ctx, req, project, s[5], s.size() == i + 2 ? s[i + 1] : "");
  if (collection == "operations") {
    if (s.size() == i + 1 && req.method == "GET") return ComputeList(ctx, req, project, scope, collection);
    if (s.size() != i + 2 || req.method != "GET") return not_found();
    auto it = ctx.state.compute_ops.find(ComputeOperationKey(req));
    if (it == ctx.state.compute_ops.end())
      return ErrorResponse(ComputeNotFound("projects/" + project + "/" + scope + "/operations/" + s[i + 1]));
    return OperationResponse(it->second);
  }
  const Kind* kind = nullptr;
  for (const Kind& k : kKinds)
    if (collection == k.collection && s[4] == k.scope_kind) kind = &k;
  if (!kind) return not_found();
  if (s.size() == i + 1) {
    if (req.method == "GET") return ComputeList(ctx, req, project, scope, collection);
    if (req.method == "POST") return Insert(ctx, req, *kind, project, scope);
    return not_found();
  }
  const std::string path = "projects/" + project + "/" + scope + "/" + collection + "/" + s[i + 1];
  auto it = ctx.state.compute.find(path);
  if (it == ctx.state.compute.end()) return ErrorResponse(ComputeNotFound(path));
  if (s.size() == i + 2) {
    if (req.method == "GET") {
      return OkResponse(it->second);
    }
    if (req.method == "DELETE") return Delete(ctx, project, scope, path, it->second);
  } else if (s.size() == i + 3 && s[i + 2] == "resize" && req.method == "POST" &&
             collection == "instanceGroupManagers") {
    return Resize(ctx, req, project, scope, path, it->second);
  } else if (s.size() == i + 3 && s[i + 2] == "listManagedInstances" && req.method == "POST" &&
             collection == "instanceGroupManagers") {
    return ListManagedInstances(ctx, req, path, it->second);
  }
  return not_found();
}

}  // namespace tpu::sim
