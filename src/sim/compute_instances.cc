// A managed instance group's instances and their lifecycle (see compute_instances.h).
#include "sim/compute_instances.h"

#include <algorithm>
#include <vector>

#include "sim/cloud_operations.h"
#include "sim/compute_reservations.h"
#include "sim/compute_routes.h"

namespace tpu::sim {
namespace {

constexpr const char* kComputeRoot = "https://www.googleapis.com/compute/v1/";

// "projects/P/zones/Z/…" → "projects/P/zones/Z".
std::string ZoneScopeOf(const std::string& key) {
  const size_t zone = key.find("/zones/");
  return key.substr(0, key.find('/', zone + 7));
}

// GCE's created-by names the group by project number, not id (gcpdiag,
// queries/gce.py: "projects/12340002/zones/…/instanceGroupManagers/…").
// The emulator has no project numbers: it derives a stable 12-digit one.
std::string ProjectNumber(const std::string& project) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : project) h = (h ^ c) * 1099511628211ull;
  return std::to_string(100000000000ull + h % 900000000000ull);
}

// InstanceGroupManager.base_instance_name: "the MIG appends a hyphen and a
// random four-character string to the base instance name".
std::string NewMemberName(SimContext& ctx, const std::string& scope, const std::string& base) {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  for (;;) {
    std::string name = base + "-";
    for (int i = 0; i < 4; ++i) name += kChars[ctx.rng() % 36];
    if (!ctx.state.instances.count(scope + "/instances/" + name)) return name;
  }
}

json MemberMetadata(SimContext& ctx, const std::string& mig_key, const json& tmpl) {
  json items = json::array();
  const json md = tmpl.value("properties", json::object()).value("metadata", json::object());
  for (const auto& item : md.value("items", json::array())) items.push_back(item);
  const std::string project = mig_key.substr(9, mig_key.find('/', 9) - 9);
  items.push_back({{"key", "created-by"},
                   {"value", "projects/" + ProjectNumber(project) +
                                 mig_key.substr(mig_key.find("/zones/"))}});
  return {{"kind", "compute#metadata"}, {"fingerprint", NewFingerprint(ctx)}, {"items", items}};
}

// The group's instances not on their way out, oldest first.
std::vector<InstanceRecord*> Members(CloudState& state, const std::string& mig_key) {
  std::vector<InstanceRecord*> out;
  const std::string prefix = ZoneScopeOf(mig_key) + "/instances/";
  for (auto it = state.instances.lower_bound(prefix);
       it != state.instances.end() && it->first.rfind(prefix, 0) == 0; ++it)
    if (it->second.mig_key == mig_key && !it->second.removing) out.push_back(&it->second);
  std::stable_sort(out.begin(), out.end(), [](const InstanceRecord* a, const InstanceRecord* b) {
    return a->wire.value("id", "").size() != b->wire.value("id", "").size()
               ? a->wire.value("id", "").size() < b->wire.value("id", "").size()
               : a->wire.value("id", "") < b->wire.value("id", "");
  });
  return out;
}

// What an unsettled instance's operation says of its status now.
// "" when the instance does not exist (its creation failed).
std::string DerivedStatus(const CloudState& state, const InstanceRecord& rec) {
  if (rec.removing) return rec.wire.value("status", "").empty() ? "" : "STOPPING";
  if (rec.action != "CREATING" || rec.op_key.empty()) return rec.wire.value("status", "RUNNING");
  auto op = state.compute_ops.find(rec.op_key);
  if (op == state.compute_ops.end() || op->second.done) return rec.wire.value("status", "RUNNING");
  return op->second.wire.value("status", "") == "PENDING" ? "PROVISIONING" : "STAGING";
}

// A member of a group whose template names a specific reservation takes one
// of its VMs (its machine's chips) when made. Returns false when the
// reservation has none left: GCE's error for that instance's attempt, as
// kubernetes/autoscaler reads it (cluster-autoscaler/cloudprovider/gce,
// autoscaling_gce_client_test.go: CONDITION_NOT_MET, "Specified reservation
// 'rsv-name' does not have available resources for the request.").
bool TakeReservedVm(CloudState& state, const std::string& reservation, const std::string& zone,
                    InstanceRecord& rec) {
  if (reservation.empty()) return true;
  const CapacityModel::Reservation* r = state.capacity.FindReservation(reservation);
  if (!r) return true;  // never declared: unlimited, as for pools
  const int64_t chips = r->chips_per_vm;
  if (!state.capacity.Acquire(zone, r->accelerator, reservation, chips).empty()) {
    const std::string name = reservation.substr(reservation.find('/') + 1);
    rec.errors = json::array({{{"code", "CONDITION_NOT_MET"},
                               {"message", "Specified reservation '" + name +
                                               "' does not have available resources for the request."}}});
    return false;
  }
  rec.reservation = reservation;
  rec.chips = chips;
  return true;
}

// The instance is gone (or was never made): its reserved VM goes back.
void GiveBackReservedVm(CloudState& state, InstanceRecord& rec) {
  if (rec.chips > 0) {
    const CapacityModel::Reservation* r = state.capacity.FindReservation(rec.reservation);
    state.capacity.Release("", r ? r->accelerator : "", rec.reservation, rec.chips);
  }
  rec.chips = 0;
  rec.reservation.clear();
}

}  // namespace

std::string NewFingerprint(SimContext& ctx) {
  static constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  uint64_t v = ctx.rng();
  unsigned char b[9] = {};
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
  std::string out;
  for (int i = 0; i < 9; i += 3) {
    const uint32_t n = (b[i] << 16) | (b[i + 1] << 8) | b[i + 2];
    for (int k = 3; k >= 0; --k) out += kB64[(n >> (6 * k)) & 63];
  }
  return out.substr(0, 11) + "=";  // 8 bytes: 11 characters and one pad
}

std::string ComputeOpKey(const OpRecord& op) {
  const std::string self = op.wire.value("selfLink", "");
  const size_t at = self.find("projects/");
  return at == std::string::npos ? "" : self.substr(at);
}

void CreateGroupInstances(SimContext& ctx, const std::string& mig_key, const json& mig, int count,
                          const std::string& op_key) {
  const std::string scope = ZoneScopeOf(mig_key);
  const std::string tmpl_url = mig.value("instanceTemplate", "");
  auto tmpl_it = ctx.state.compute.find(tmpl_url.substr(std::min(tmpl_url.size(), tmpl_url.find("projects/"))));
  const json tmpl = tmpl_it == ctx.state.compute.end() ? json::object() : tmpl_it->second;
  const json props = tmpl.value("properties", json::object());
  const std::string machine = props.value("machineType", "");
  const std::string project = mig_key.substr(9, mig_key.find('/', 9) - 9);
  const std::string reservation =
      ConsumedReservation(props.value("reservationAffinity", json::object()), project);
  const std::string zone = scope.substr(scope.rfind('/') + 1);
  for (int i = 0; i < count; ++i) {
    const std::string name = NewMemberName(ctx, scope, mig.value("baseInstanceName", mig.value("name", "")));
    const std::string key = scope + "/instances/" + name;
    InstanceRecord rec;
    rec.mig_key = mig_key;
    rec.action = "CREATING";
    rec.op_key = op_key;
    rec.wire = {{"kind", "compute#instance"},
                {"id", NextComputeId(ctx)},
                {"name", name},
                {"zone", kComputeRoot + scope},
                {"machineType", kComputeRoot + scope + "/machineTypes/" + machine},
                {"status", "PROVISIONING"},
                {"creationTimestamp", Rfc3339(ctx.now_ms)},
                {"metadata", MemberMetadata(ctx, mig_key, tmpl)},
                {"selfLink", kComputeRoot + key}};
    if (!TakeReservedVm(ctx.state, reservation, zone, rec)) {
      // Its attempt failed at once: CREATING, no id or status, lastAttempt
      // errors, not settled by the group's operation (compute_instances.h).
      rec.wire["status"] = "";
      rec.op_key.clear();
    }
    ctx.state.instances[key] = std::move(rec);
  }
  ctx.changed = true;
}

void ResizeGroupInstances(SimContext& ctx, const std::string& mig_key, const json& mig, int target,
                          const std::string& op_key) {
  std::vector<InstanceRecord*> members = Members(ctx.state, mig_key);
  const int have = static_cast<int>(members.size());
  if (target > have) return CreateGroupInstances(ctx, mig_key, mig, target - have, op_key);
  // Which instances a smaller group drops is GCE's choice; the emulator drops the newest.
  for (int i = have - 1; i >= target; --i) {
    members[i]->action = "DELETING";
    members[i]->removing = true;
    members[i]->op_key = op_key;
  }
  ctx.changed = true;
}

void RemoveGroupInstances(SimContext& ctx, const std::string& mig_key, const std::string& op_key) {
  ResizeGroupInstances(ctx, mig_key, json::object(), 0, op_key);
}

void SettleInstances(CloudState& state, const std::string& op_key, const json& error) {
  const bool failed = !error.is_null();
  for (auto it = state.instances.begin(); it != state.instances.end();) {
    InstanceRecord& rec = it->second;
    if (rec.op_key != op_key) {
      ++it;
      continue;
    }
    if (rec.removing && !failed) {
      GiveBackReservedVm(state, rec);
      it = state.instances.erase(it);
      continue;
    }
    if (rec.removing) {
      rec.removing = false;
      if (rec.action == "DELETING") rec.action = "NONE";
    } else if (failed) {
      // ManagedInstance.CREATING: "If the group fails to create this
      // instance, it will try again until it is successful." Until then the
      // instance does not exist: no id, no instanceStatus, and GET finds none.
      rec.errors = error.value("errors", json::array());
      rec.wire["status"] = "";
      GiveBackReservedVm(state, rec);
    } else {
      rec.action = "NONE";
      rec.wire["status"] = "RUNNING";
      rec.errors = nullptr;
    }
    rec.op_key.clear();
    ++it;
  }
}

void CountGroupActions(const CloudState& state, const std::string& mig_key, json& mig) {
  int creating = 0, deleting = 0, none = 0;
  const std::string prefix = ZoneScopeOf(mig_key) + "/instances/";
  for (auto it = state.instances.lower_bound(prefix);
       it != state.instances.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    if (it->second.mig_key != mig_key) continue;
    const std::string& a = it->second.action;
    (a == "CREATING" ? creating : a == "DELETING" ? deleting : none)++;
  }
  mig["currentActions"]["creating"] = creating;
  mig["currentActions"]["deleting"] = deleting;
  mig["currentActions"]["none"] = none;
  // InstanceGroupManagerStatus.is_stable: "none of the instances in the
  // managed instance group is currently undergoing any type of change".
  mig["status"]["isStable"] = creating == 0 && deleting == 0;
}

void DropGroupInstances(CloudState& state, const std::string& mig_key) {
  for (auto it = state.instances.begin(); it != state.instances.end();) {
    if (it->second.mig_key != mig_key) {
      ++it;
      continue;
    }
    GiveBackReservedVm(state, it->second);
    it = state.instances.erase(it);
  }
}

json InstanceWire(const CloudState& state, const InstanceRecord& rec) {
  json wire = rec.wire;
  wire["status"] = DerivedStatus(state, rec);
  return wire;
}

json ManagedInstances(const CloudState& state, const std::string& mig_key) {
  json out = json::array();
  const std::string prefix = ZoneScopeOf(mig_key) + "/instances/";
  for (auto it = state.instances.lower_bound(prefix);
       it != state.instances.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    const InstanceRecord& rec = it->second;
    if (rec.mig_key != mig_key) continue;
    const std::string status = DerivedStatus(state, rec);
    json m = {{"instance", rec.wire.value("selfLink", "")},
              {"name", rec.wire.value("name", "")},
              {"currentAction", rec.action}};
    // "The URL can exist even if the instance has not yet been created"; its
    // id and status are "empty when the instance does not exist".
    if (!status.empty()) {
      m["id"] = rec.wire.value("id", "");
      m["instanceStatus"] = status;
    }
    if (rec.errors.is_array() && !rec.errors.empty())
      m["lastAttempt"] = {{"errors", {{"errors", rec.errors}}}};
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace tpu::sim
