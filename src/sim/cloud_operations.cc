// Operation lifecycle and effects (see cloud_operations.h).
#include "sim/cloud_operations.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <vector>

#include "sim/compute_instances.h"
#include "sim/gke_instance_groups.h"

namespace tpu::sim {

std::string NewOperationName(SimContext& ctx) {
  char hex[16];
  std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(ctx.rng() & 0xffffffffu));
  return "operation-" + std::to_string(ctx.now_ms) + "-" + hex;
}

std::string Rfc3339(int64_t ms) {
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return buf;
}

std::string NextComputeId(SimContext& ctx) { return std::to_string(ctx.state.next_id++); }

namespace {

int64_t Latency(const SimContext& ctx, const std::string& type) {
  auto it = ctx.op_latency_ms.find(type);
  if (it == ctx.op_latency_ms.end()) it = ctx.op_latency_ms.find("default");
  return it == ctx.op_latency_ms.end() ? 200 : it->second;
}

json InjectedFailure() {
  return {{"code", 13}, {"message", "Internal error. Please try again."}};
}

}  // namespace

OpRecord& StartGkeOperation(SimContext& ctx, const GkeOpSpec& spec) {
  OpRecord op;
  const std::string name = NewOperationName(ctx);
  op.cluster_key = spec.cluster_key;
  op.target_key = spec.target_key;
  op.effect = spec.effect;
  op.start_ms = ctx.now_ms;
  op.done_ms = ctx.now_ms + Latency(ctx, spec.type);
  op.error = spec.error;
  if (op.error.is_null() && ctx.fail_operation) op.error = InjectedFailure();
  op.wire = {{"name", name},
             {"zone", spec.location},
             {"operationType", spec.type},
             {"status", "PENDING"},
             {"selfLink", "https://container.googleapis.com/v1/projects/" + spec.project +
                              "/locations/" + spec.location + "/operations/" + name},
             {"targetLink", spec.target_link},
             {"location", spec.location},
             {"startTime", Rfc3339(ctx.now_ms)}};
  ctx.changed = true;
  auto [it, inserted] = ctx.state.gke_ops.emplace(spec.project + "/" + name, std::move(op));
  if (inserted) ctx.state.live_ops.push_back(&it->second);
  ctx.state.quiet_until_ms = 0;
  ctx.started_on_clusters.push_back(spec.cluster_key);
  return it->second;
}

OpRecord& StartComputeOperation(SimContext& ctx, const ComputeOpSpec& spec) {
  OpRecord op;
  op.compute = true;
  op.target_key = spec.target_key;
  op.effect = spec.effect;
  op.start_ms = ctx.now_ms;
  op.done_ms = ctx.now_ms + Latency(ctx, spec.type);
  if (ctx.fail_operation) {
    op.error = {{"errors", json::array({{{"code", "INTERNAL_ERROR"},
                                         {"message", "Internal error. Please try again."}}})}};
  }
  const std::string name = NewOperationName(ctx);
  const std::string base = "https://www.googleapis.com/compute/v1/projects/" + spec.project + "/";
  const std::string path = "projects/" + spec.project + "/" + spec.scope + "/operations/" + name;
  op.wire = {{"kind", "compute#operation"},
             {"id", NextComputeId(ctx)},
             {"name", name},
             {"operationType", spec.type},
             {"targetLink", spec.target_link},
             {"targetId", spec.target_id},
             {"status", "PENDING"},
             {"user", "emulator@tpu-provisioner.iam.gserviceaccount.com"},
             {"progress", 0},
             {"insertTime", Rfc3339(ctx.now_ms)},
             {"selfLink", base + spec.scope + "/operations/" + name}};
  if (spec.scope.rfind("zones/", 0) == 0) op.wire["zone"] = base + spec.scope;
  if (spec.scope.rfind("regions/", 0) == 0) op.wire["region"] = base + spec.scope;
  ctx.changed = true;
  auto [it, inserted] = ctx.state.compute_ops.emplace(path, std::move(op));
  if (inserted) ctx.state.live_ops.push_back(&it->second);
  ctx.state.quiet_until_ms = 0;
  return it->second;
}

std::string ProvisioningModelOf(const PoolRecord& pool) {
  auto config = pool.wire.find("config");
  const bool spot = config != pool.wire.end() && config->value("spot", false);
  return spot ? "SPOT" : "STANDARD";
}

void ReleasePoolChips(CloudState& state, PoolRecord& pool) {
  if (pool.chips > 0)
    state.capacity.Release(pool.zone, pool.accelerator, pool.reservation, pool.chips, ProvisioningModelOf(pool));
  pool.chips = 0;
}

namespace {

// GKE's words for a specific reservation short of VMs for a pool
// (GoogleCloudPlatform/gsutil#1000, node-pools create: "Reservation does not
// have enough resources for the request: specific reservation "reservation"
// is insufficient for node pool "np4" at zone "us-central1-c": required 1 and
// short of 1 VM count of machine type n2-standard-2.").
std::string ReservationShortOfVms(const CapacityModel::Reservation& r, const PoolRecord& pool,
                                  int64_t chips) {
  const int64_t required = chips / r.chips_per_vm;
  const int64_t free_vms = (r.chips - r.used) / r.chips_per_vm;
  const std::string name = pool.reservation.substr(pool.reservation.find('/') + 1);
  return "Reservation does not have enough resources for the request: specific reservation \"" +
         name + "\" is insufficient for node pool \"" + pool.wire.value("name", "") + "\" at zone \"" +
         pool.zone + "\": required " + std::to_string(required) + " and short of " +
         std::to_string(required - free_vms) + " VM count of machine type " + r.machine_type + ".";
}

}  // namespace

json AcquirePoolChips(CloudState& state, PoolRecord& pool, int64_t chips, const std::string& what) {
  if (pool.accelerator.empty() || chips <= 0) return nullptr;
  std::string stockout =
      state.capacity.Acquire(pool.zone, pool.accelerator, pool.reservation, chips, ProvisioningModelOf(pool));
  if (!stockout.empty()) {
    const auto* r = pool.reservation.empty() ? nullptr : state.capacity.FindReservation(pool.reservation);
    if (r && !r->machine_type.empty()) stockout = ReservationShortOfVms(*r, pool, chips);
    return {{"code", 8}, {"message", what + stockout}};
  }
  pool.chips = chips;
  return nullptr;
}

namespace {

void ApplyEffect(CloudState& state, OpRecord& op) {
  const bool failed = !op.error.is_null();
  switch (op.effect) {
    case OpEffect::kNone:
      break;
    case OpEffect::kCreateCluster: {
      auto it = state.clusters.find(op.target_key);
      if (it != state.clusters.end()) it->second["status"] = failed ? "ERROR" : "RUNNING";
      // The pools the cluster was created with come up with it.
      const std::string prefix = op.target_key + "/";
      for (auto p = state.pools.lower_bound(prefix);
           p != state.pools.end() && p->first.rfind(prefix, 0) == 0; ++p) {
        if (p->second.wire.value("status", "") != "PROVISIONING") continue;
        if (failed) ReleasePoolChips(state, p->second);
        p->second.wire["status"] = failed ? "ERROR" : "RUNNING";
        if (!failed) SizePoolInstanceGroups(state, p->second, /*stable=*/true);
      }
      break;
    }
    case OpEffect::kDeleteCluster: {
      const std::string prefix = op.target_key + "/";
      for (auto it = state.pools.lower_bound(prefix);
           it != state.pools.end() && it->first.rfind(prefix, 0) == 0;) {
        ReleasePoolChips(state, it->second);
        DeletePoolInstanceGroups(state, it->second);
        it = state.pools.erase(it);
      }
      state.clusters.erase(op.target_key);
      break;
    }
    case OpEffect::kCreatePool:
    case OpEffect::kReconcilePool: {
      auto it = state.pools.find(op.target_key);
      if (it == state.pools.end()) break;
      json& wire = it->second.wire;
      if (!failed) {
        wire["status"] = "RUNNING";
        wire.erase("statusMessage");
        SizePoolInstanceGroups(state, it->second, /*stable=*/true);
      } else if (op.effect == OpEffect::kCreatePool) {
        ReleasePoolChips(state, it->second);
        wire["status"] = "ERROR";
        wire["statusMessage"] = op.error.value("message", "");
      } else {
        wire["status"] = "RUNNING_WITH_ERROR";
        wire["statusMessage"] = op.error.value("message", "");
      }
      break;
    }
    case OpEffect::kDeletePool: {
      auto it = state.pools.find(op.target_key);
      if (it == state.pools.end()) break;
      if (failed) {
        it->second.wire["status"] = "ERROR";
        break;
      }
      ReleasePoolChips(state, it->second);
      DeletePoolInstanceGroups(state, it->second);
      state.pools.erase(it);
      break;
    }
    case OpEffect::kDeleteCompute:
      SettleInstances(state, ComputeOpKey(op), op.error);
      if (failed) break;
      state.compute.erase(op.target_key);
      if (op.target_key.find("/instanceGroupManagers/") != std::string::npos)
        DropGroupInstances(state, op.target_key);
      break;
    case OpEffect::kDeleteInstance:
      SettleInstances(state, ComputeOpKey(op), op.error);
      break;
    case OpEffect::kMigStable: {
      SettleInstances(state, ComputeOpKey(op), op.error);
      auto it = state.compute.find(op.target_key);
      if (it != state.compute.end()) CountGroupActions(state, op.target_key, it->second);
      break;
    }
  }
}

void FinishWire(OpRecord& op, int64_t now_ms) {
  op.wire["status"] = "DONE";
  op.wire["endTime"] = Rfc3339(op.done_ms);
  if (op.compute) {
    op.wire["progress"] = 100;
    if (!op.wire.contains("startTime")) op.wire["startTime"] = Rfc3339(op.start_ms);
    if (!op.error.is_null()) {
      op.wire["error"] = op.error;
      op.wire["httpErrorStatusCode"] = 500;
      op.wire["httpErrorMessage"] = "INTERNAL SERVER ERROR";
    }
  } else if (!op.error.is_null()) {
    op.wire["error"] = op.error;
    op.wire["statusMessage"] = op.error.value("message", "");
  }
}

}  // namespace

bool AdvanceOperations(CloudState& state, int64_t now_ms) {
  if (now_ms < state.quiet_until_ms) return false;
  bool changed = false;
  std::vector<OpRecord*> ending;
  int64_t next_change = INT64_MAX;
  bool compute_live = false;  // their progress moves with the clock: no quiet time
  auto visit = [&](OpRecord& op) {
    if (op.done) return;
    if (now_ms >= op.done_ms) {
      ending.push_back(&op);
      return;
    }
    compute_live = compute_live || op.compute;
    const int64_t running_at = op.start_ms + (op.done_ms - op.start_ms) / 5;
    // Once per operation, not per request: a thousand operations in flight
    // would otherwise cost a thousand JSON lookups on every call.
    if (now_ms >= running_at && !op.running_seen) {
      op.running_seen = true;
      if (op.wire["status"] == "PENDING") {
        op.wire["status"] = "RUNNING";
        if (op.compute) op.wire["startTime"] = Rfc3339(running_at);
        changed = true;
      }
    }
    next_change = std::min(next_change, op.running_seen ? op.done_ms : running_at);
    if (op.compute && op.done_ms > op.start_ms) {
      int progress = static_cast<int>(100 * (now_ms - op.start_ms) / (op.done_ms - op.start_ms));
      // Progress is derived from the clock, so it is not worth a state write.
      op.wire["progress"] = progress;
    }
  };
  for (OpRecord* op : state.live_ops) visit(*op);
  state.quiet_until_ms = compute_live ? 0 : next_change;
  std::stable_sort(ending.begin(), ending.end(),
                   [](const OpRecord* a, const OpRecord* b) { return a->done_ms < b->done_ms; });
  for (OpRecord* op : ending) {
    op->done = true;
    FinishWire(*op, now_ms);
    ApplyEffect(state, *op);
    changed = true;
  }
  if (!ending.empty())
    state.live_ops.erase(std::remove_if(state.live_ops.begin(), state.live_ops.end(),
                                        [](const OpRecord* op) { return op->done; }),
                         state.live_ops.end());
  return changed;
}

}  // namespace tpu::sim
