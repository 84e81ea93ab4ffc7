// Scale-down: lower quota, measure admitted usage, wait or proceed.
#include "kueue/scale_down.h"

#include <algorithm>
#include <set>

#include "kueue/bookings.h"
#include "kueue/versions.h"

namespace tpu::kueue {
namespace {

bool HasCondition(const json& obj, const std::string& type) {
  if (!obj.contains("status") || !obj["status"].contains("conditions")) return false;
  for (const auto& c : obj["status"]["conditions"]) {
    if (c.value("type", "") == type && c.value("status", "") == "True") return true;
  }
  return false;
}

}  // namespace

Result<FlavorUse> ScaleDownGate::Usage(const std::string& flavor, int64_t quota,
                                       const std::vector<json>* watched) {
  const KueueConfig& config = sync_.config();
  auto versions = sync_.Versions();
  if (!versions.ok()) return versions.status();
  const kube::ResourceRef cq_ref = versions->Ref(kube::resources::kClusterQueues);
  FlavorUse use{flavor, quota, 0, {}};

  // Which ClusterQueues count: ours, or every member of our cohort.
  std::set<std::string> queues;
  int64_t queue_usage = 0;
  auto cqs = client_.List(cq_ref, "", {});
  if (!cqs.ok()) return cqs.status();
  for (const auto& cq : cqs->items) {
    const std::string name = cq["metadata"].value("name", "");
    const json spec = cq.value("spec", json::object());
    bool member = config.cohort_mode() ? spec.value(CohortField(cq_ref.version), "") == config.cohort
                                       : name == config.cluster_queue;
    if (!member) continue;
    queues.insert(name);
    if (!cq.contains("status") || !cq["status"].contains("flavorsUsage")) continue;
    for (const auto& fu : cq["status"]["flavorsUsage"]) {
      if (fu.value("name", "") != flavor) continue;
      for (const auto& r : fu.value("resources", json::array())) {
        if (r.value("name", "") == config.resource) queue_usage += ParseQuantity(r.value("total", json(0)));
      }
    }
  }
  // Workloads admitted and not finished, with a pod set on this flavor.
  std::vector<json> listed;
  if (!watched) {
    auto workloads = client_.List(versions->Ref(kube::resources::kWorkloads), "", {});
    if (!workloads.ok()) return workloads.status();
    listed = std::move(workloads->items);
  }
  int64_t admitted_usage = 0;
  for (const auto& wl : watched ? *watched : listed) {
    if (!wl.contains("status") || !wl["status"].contains("admission")) continue;
    if (HasCondition(wl, "Finished")) continue;
    const json& admission = wl["status"]["admission"];
    if (!queues.count(admission.value("clusterQueue", ""))) continue;
    int64_t mine = 0;
    for (const auto& ps : admission.value("podSetAssignments", json::array())) {
      const json flavors = ps.value("flavors", json::object());
      if (flavors.value(config.resource, "") != flavor) continue;
      mine += ParseQuantity(ps.value("resourceUsage", json::object()).value(config.resource, json(0)));
    }
    if (mine > 0) {
      admitted_usage += mine;
      use.workloads.push_back(wl["metadata"].value("namespace", "") + "/" + wl["metadata"].value("name", ""));
    }
  }
  // Kueue's own accounting and ours can lag each other; trust the larger.
  use.usage = std::max(queue_usage, admitted_usage);
  return use;
}

Status ScaleDownGate::SetHold(bool on) {
  const KueueConfig& config = sync_.config();
  if (config.hold == HoldPolicy::kNone || config.cohort_mode() || holding_ == on) return Status::OK();
  auto ref = sync_.Kueue(kube::resources::kClusterQueues);
  if (!ref.ok()) return ref.status();
  json obj = {{"apiVersion", ref->ApiVersion()}, {"kind", "ClusterQueue"},
              {"metadata", {{"name", config.cluster_queue}}}};
  // Releasing applies nothing under the hold's manager: SSA then removes the
  // stopPolicy it set, unless a person has set one too.
  if (on) obj["spec"] = {{"stopPolicy", config.hold == HoldPolicy::kHold ? "Hold" : "HoldAndDrain"}};
  auto r = client_.Apply(*ref, "", obj, {kHoldFieldManager, true, ""});
  if (!r.ok()) return r.status();
  holding_ = on;
  return Status::OK();
}

Result<std::optional<ScaleDownVerdict>> ScaleDownGate::BookingHold(const std::vector<PoolRemoval>& removals,
                                                                   const std::string& key) {
  std::vector<std::string> flex;
  for (const auto& r : removals)
    if (r.flex_start) flex.push_back(r.node_pool);
  if (flex.empty()) return std::optional<ScaleDownVerdict>{};
  auto bookings = ReadBookings(client_);
  if (!bookings.ok()) return bookings.status();
  std::string why;
  auto held = PoolsHeldByBookings(*bookings, flex, &why);
  if (held.empty()) return std::optional<ScaleDownVerdict>{};
  ScaleDownVerdict verdict;
  verdict.decision = ScaleDownDecision::kWait;
  std::string pools;
  for (const auto& p : held) pools += (pools.empty() ? "" : ", ") + p;
  verdict.message = "waiting to delete flex-start node pools " + pools + ": " + why;
  auto ref = sync_.Kueue(sync_.config().cohort_mode() ? kube::resources::kCohorts : kube::resources::kClusterQueues);
  if (!ref.ok()) return ref.status();
  events_.Record({ref->ApiVersion(), ref->kind, sync_.config().queue_name(), ""}, "Normal", "ScaleDownWaitingForBooking",
                 verdict.message, "booking:" + key);
  return std::optional<ScaleDownVerdict>{std::move(verdict)};
}

Result<ScaleDownVerdict> ScaleDownGate::Check(const manifest::Target& desired,
                                              const std::vector<PoolRemoval>& removals) {
  std::set<std::string> excluded;
  std::set<std::string> flavors;
  for (const auto& r : removals) {
    excluded.insert(r.node_pool);
    flavors.insert(FlavorName(sync_.config(), r.accelerator, r.topology));
  }
  std::string key, pools;
  for (const auto& p : excluded) {
    key += p + ",";
    pools += (pools.empty() ? "" : ", ") + p;
  }
  auto report = sync_.Sync(desired, excluded);  // quota first, so nothing new lands on these pools
  if (!report.ok()) return report.status();
  // A live booking is never cut short, however long it runs.
  auto booked = BookingHold(removals, key);
  if (!booked.ok()) return booked.status();
  if (*booked) return std::move(**booked);

  ScaleDownVerdict verdict;
  bool fits = true;
  std::optional<std::vector<json>> cached = workloads_ ? workloads_() : std::nullopt;
  for (int round = 0; round < 2; ++round) {
    const std::vector<json>* from = round == 0 && cached ? &*cached : nullptr;
    fits = true;
    verdict.flavors.clear();
    for (const auto& flavor : flavors) {
      int64_t quota = 0;
      for (const auto& fq : report->flavors) {
        if (fq.flavor == flavor) quota = fq.nominal_quota;
      }
      auto use = Usage(flavor, quota, from);
      if (!use.ok()) return use.status();
      if (use->usage > use->quota) fits = false;
      verdict.flavors.push_back(std::move(*use));
    }
    // A wait stands on the cache; a proceed is confirmed by a list.
    if (!fits || !from) break;
  }

  const KueueConfig& config = sync_.config();
  auto ref = sync_.Kueue(config.cohort_mode() ? kube::resources::kCohorts : kube::resources::kClusterQueues);
  if (!ref.ok()) return ref.status();
  kube::ObjectRef about{ref->ApiVersion(), ref->kind, config.queue_name(), ""};
  const auto now = clock_.WallNow();
  if (fits) {
    waiting_since_.erase(key);
    verdict.message = "admitted usage fits the lowered quota; deleting node pools " + pools;
    if (Status s = SetHold(false); !s.ok()) return s;
    events_.Record(about, "Normal", "ScaleDownProceeding", verdict.message, key);
    return verdict;
  }
  auto since = waiting_since_.emplace(key, now).first->second;
  verdict.waited = std::chrono::duration_cast<std::chrono::seconds>(now - since);
  std::string usage;
  for (const auto& f : verdict.flavors) {
    if (f.usage <= f.quota) continue;
    usage += (usage.empty() ? "" : "; ") + f.flavor + ": " + std::to_string(f.usage) + " chips admitted, quota " +
             std::to_string(f.quota) + " (" + std::to_string(f.workloads.size()) + " workloads)";
  }
  if (verdict.waited >= config.scale_down_timeout) {
    waiting_since_.erase(key);
    verdict.timed_out = true;
    verdict.message = "scale-down timeout (" + std::to_string(config.scale_down_timeout.count()) +
                      "s) reached with " + usage + "; deleting node pools " + pools;
    if (Status s = SetHold(false); !s.ok()) return s;
    events_.Record(about, "Warning", "ScaleDownTimeout", verdict.message, key);
    return verdict;
  }
  verdict.decision = ScaleDownDecision::kWait;
  verdict.message = "waiting to delete node pools " + pools + ": " + usage;
  if (Status s = SetHold(true); !s.ok()) return s;
  events_.Record(about, "Normal", "ScaleDownWaiting", verdict.message, key);
  return verdict;
}

}  // namespace tpu::kueue
