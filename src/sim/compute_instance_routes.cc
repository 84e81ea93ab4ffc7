// HTTP routes of a MIG's instances (docs/emulator.md, "Compute: a MIG's
// instances"): instances.get, instances.delete, instances.setMetadata with
// its fingerprint check, and instanceGroupManagers.listManagedInstances with
// the group's paging mode. The lifecycle itself is in compute_instances.cc.
#include <cctype>

#include "sim/api_schema.h"
#include "sim/cloud_errors.h"
#include "sim/cloud_operations.h"
#include "sim/compute_instances.h"
#include "sim/compute_routes.h"

namespace tpu::sim {
namespace {

// Items.key: "Keys must conform to the following regexp: [a-zA-Z0-9-_]+, and
// be less than 128 bytes in length"; Items.value: "less than or equal to
// 262144 bytes"; Metadata.items: "The total size of all keys and values must
// be less than 512 KB". Messages name the key, never a value: values may be secrets.
std::optional<ApiError> CheckItems(const json& items) {
  size_t total = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string key = items[i].value("key", "");
    const std::string value = items[i].value("value", "");
    const std::string field = "'metadata.items[" + std::to_string(i) + "]";
    bool ok = !key.empty() && key.size() < 128;
    for (unsigned char c : key) ok = ok && (std::isalnum(c) || c == '-' || c == '_');
    if (!ok)
      return BadRequest("Invalid value for field " + field + ".key': '" + key +
                        "'. Must be a match of regex '[a-zA-Z0-9-_]{1,127}'");
    if (value.size() > 262144)
      return BadRequest("Invalid value for field " + field + ".value' of key '" + key +
                        "': the value exceeds 262144 bytes.");
    total += key.size() + value.size();
  }
  if (total >= 512 * 1024)
    return BadRequest("Invalid value for field 'metadata.items': the keys and values total " +
                      std::to_string(total) + " bytes, which is over 512 KB.");
  return std::nullopt;
}

SimResponse SetMetadata(SimContext& ctx, const SimRequest& req, const std::string& project,
                        const std::string& scope, InstanceRecord& rec) {
  if (auto err = ApiSchema::Builtin().Validate(req.parsed, "google.cloud.compute.v1.Metadata",
                                               "metadata_resource"))
    return ErrorResponse(BadRequest(*err));
  const json body = req.parsed.is_object() ? req.parsed : json::object();
  json& metadata = rec.wire["metadata"];
  // Metadata.fingerprint: "You must always provide an up-to-date fingerprint
  // hash in order to update or change metadata, otherwise the request will
  // fail with error 412 conditionNotMet." The message is the one
  // terraform-provider-google retries on (FINGERPRINT_FAIL_ERRORS).
  if (body.value("fingerprint", "") != metadata.value("fingerprint", "") ||
      body.value("fingerprint", "").empty())
    return ErrorResponse(ApiError{412, "FAILED_PRECONDITION", "conditionNotMet",
                                  "Supplied fingerprint does not match current metadata fingerprint."});
  const json items = body.value("items", json::array());
  if (auto err = CheckItems(items)) return ErrorResponse(*err);
  // The new items and fingerprint take effect with the request: the
  // fingerprint "changes after every request to modify or update metadata",
  // and it is "essentially a hash of the metadata's contents".
  metadata["items"] = items;
  metadata["fingerprint"] = NewFingerprint(ctx);
  ctx.changed = true;
  ComputeOpSpec spec{project, scope, "setMetadata", rec.wire.value("selfLink", ""),
                     rec.wire.value("id", ""), OpEffect::kNone, ""};
  return OkResponse(StartComputeOperation(ctx, spec).wire);
}

SimResponse DeleteInstance(SimContext& ctx, const std::string& project, const std::string& scope,
                           const std::string& key, InstanceRecord& rec) {
  ComputeOpSpec spec{project, scope, "delete", rec.wire.value("selfLink", ""), rec.wire.value("id", ""),
                     OpEffect::kDeleteInstance, key};
  OpRecord& op = StartComputeOperation(ctx, spec);
  rec.removing = true;
  rec.op_key = ComputeOpKey(op);
  return OkResponse(op.wire);
}

}  // namespace

SimResponse HandleInstance(SimContext& ctx, const SimRequest& req, const std::string& project,
                           const std::string& scope, const std::string& name, const std::string& verb) {
  const std::string key = "projects/" + project + "/" + scope + "/instances/" + name;
  auto it = ctx.state.instances.find(key);
  // An instance whose creation failed does not exist yet.
  if (it == ctx.state.instances.end() || it->second.wire.value("status", "").empty())
    return ErrorResponse(ComputeNotFound(key));
  InstanceRecord& rec = it->second;
  if (verb.empty() && req.method == "GET") return OkResponse(InstanceWire(ctx.state, rec));
  if (verb.empty() && req.method == "DELETE") return DeleteInstance(ctx, project, scope, key, rec);
  if (verb == "setMetadata" && req.method == "POST") return SetMetadata(ctx, req, project, scope, rec);
  return ErrorResponse(NotFound("The requested URL " + req.path + " was not found."));
}

SimResponse ListManagedInstances(SimContext& ctx, const SimRequest& req, const std::string& mig_key,
                                 const json& mig) {
  json all = ManagedInstances(ctx.state, mig_key);
  // InstanceGroupManager.listManagedInstancesResults: PAGELESS (the default)
  // ignores maxResults and pageToken; PAGINATED respects them.
  ComputePage page{0, all.size(), ""};
  if (mig.value("listManagedInstancesResults", "PAGELESS") == "PAGINATED") {
    if (auto err = ComputePaginate(req, all.size(), &page)) return ErrorResponse(*err);
  }
  SimResponse r;
  json items = json::array();
  for (size_t i = page.begin; i < page.end; ++i) items.push_back(all[i]);
  r.body = json::object();
  if (!items.empty()) r.body["managedInstances"] = items;
  if (!page.next.empty()) r.body["nextPageToken"] = page.next;
  return r;
}

}  // namespace tpu::sim
