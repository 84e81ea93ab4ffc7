// The Reconciler's Kueue steps (docs/architecture.md, "Beside Kueue"): which target the Kubernetes
// cluster's quota follows, the scale-down gate in front of deletes and
// shrinks, and the quota sync after each pass. See reconciler.h.
#include <algorithm>

#include "catalog/catalog.h"
#include "kueue/flex_start.h"
#include "daemon/kube_target.h"
#include "daemon/reconciler.h"
#include "plan/ownership.h"
#include "plan/pool_slot.h"

namespace tpu::daemon {
namespace {

const char* ModeName(kueue::QuotaMode m) { return m == kueue::QuotaMode::kReady ? "ready" : "declared"; }

// The accelerator and topology of `pool`: from the target that declared it,
// else from the live pool (machine type and placement policy) if it is one of
// git's (owned by this target). Demand-driven pools belong to their workload and
// hold no declared quota: false, so their deletes are never gated.
bool PoolShape(const std::string& pool, const std::optional<manifest::Target>& declared,
               const cloud::LiveState& live, const std::string& key, kueue::PoolRemoval* out) {
  const std::string project = key.substr(0, key.find('/'));
  out->node_pool = pool;
  if (declared) {
    for (const auto& p : declared->pools)
      for (int i = 0; i < p.slices; ++i)
        if (p.PoolName(i) == pool) {
          out->accelerator = p.accelerator;
          out->topology = p.shape.topology;
          out->flex_start = p.capacity.type == manifest::CapacityType::kFlexStart;
          return true;
        }
  }
  auto it = live.projects.find(project);
  if (it == live.projects.end()) return false;
  for (const auto& c : it->second.clusters)
    for (const auto& np : c.node_pools) {
      if (np.name != pool) continue;
      if (plan::PoolOwnership(np, key) != plan::Ownership::kOwned) return false;
      const catalog::Generation* gen = catalog::GenerationOfMachineType(np.machine_type);
      if (!gen) return false;
      out->accelerator = gen->accelerator;
      out->flex_start = np.flex_start;
      out->topology = np.placement_policy && !np.placement_policy->tpu_topology.empty()
                          ? np.placement_policy->tpu_topology
                          : catalog::SingleHostTopology(np.machine_type);
      return true;
    }
  return false;
}

}  // namespace

std::optional<manifest::Target> Reconciler::KueueTarget(const manifest::Repo& repo) {
  KubeTargetChoice choice = ChooseKubeTarget(repo, options_.kube_target, KubeTargetUse::kKueue);
  const manifest::Target* found = choice.target;
  std::string error = choice.error;
  if (found && !options_.kube_target.empty() && !found->policy.kueue && !found->blocked())
    error = "--kube-target " + options_.kube_target + ": its cluster.yaml has no spec.kueue";
  // A broken revision of the target says nothing reliable about its capacity:
  // the quota written last stays.
  if (found && found->blocked()) {
    error = found->Key() + " is blocked by manifest errors; quota left as it was";
    found = nullptr;
  }
  std::lock_guard<std::mutex> lock(mu_);
  status_.kueue.enabled = true;
  if (!found) {
    status_.kueue.target.clear();
    status_.kueue.last_error = error;
    return std::nullopt;
  }
  status_.kueue.target = found->Key();
  if (!found->policy.kueue) return std::nullopt;
  return *found;
}

void Reconciler::GateScaleDowns(const manifest::Target& target, plan::Plan* to_apply,
                                std::map<std::string, std::string>* ladder_held) {
  const kueue::KueueConfig config = kueue::KueueConfigFromPolicy(*target.policy.kueue);
  for (auto& t : to_apply->targets) {
    if (t.key != target.Key()) continue;
    std::vector<kueue::PoolRemoval> removals;
    std::set<std::string> ids;
    std::map<std::string, std::string> moves;  // ladder moves: resource id → slot
    for (const auto& a : t.actions) {
      if (a.resource.kind != plan::ResourceKind::kNodePool) continue;
      const bool shrink = (a.kind == plan::ActionKind::kResize || a.kind == plan::ActionKind::kUpdate) &&
                          a.blast.chips_destroyed > 0;
      if (!a.destructive() && !shrink) continue;
      kueue::PoolRemoval r;
      // A pool of no known TPU shape holds no TPU quota: nothing to wait for.
      if (!PoolShape(a.resource.name, last_kueue_target_ ? last_kueue_target_ : target, live_, t.key, &r))
        continue;
      removals.push_back(r);
      if (a.ladder_move) moves[a.resource.Id()] = plan::SlotOf(*a.node_pool);
      else ids.insert(a.resource.Id());
    }
    if (removals.empty()) {
      held_.erase(t.key);
      return;
    }
    auto verdict = options_.kueue->CheckScaleDown(target, config, removals);
    if (!moves.empty() && (!verdict.ok() || verdict->decision != kueue::ScaleDownDecision::kProceed ||
                           verdict->timed_out)) {
      // A move is never waited on: it is dropped for this pass, and the quota
      // the check lowered is written back by the next sync.
      const std::string why = !verdict.ok() ? "scale-down check failed: " + verdict.status().ToString()
                              : verdict->timed_out ? "admitted workloads still run on it"
                                                   : verdict->message;
      for (const auto& [id, slot] : moves) (*ladder_held)[t.key + "/" + slot] = why;
      std::set<std::string> pools;
      for (const auto& a : t.actions)
        if (moves.count(a.resource.Id())) pools.insert(a.resource.name);
      std::erase_if(t.actions, [&](const plan::Action& a) { return moves.count(a.resource.Id()) > 0; });
      std::erase_if(removals, [&](const kueue::PoolRemoval& r) { return pools.count(r.node_pool) > 0; });
      kube_changed_ = true;
      if (ids.empty()) {
        // Nothing else waits: a queue held for this check admits again.
        if (Status s = options_.kueue->ReleaseHold(); !s.ok()) {
          std::lock_guard<std::mutex> lock(mu_);
          status_.kueue.last_error = s.ToString();
        }
        held_.erase(t.key);
        return;
      }
    }
    std::string message;
    double waited = 0;
    if (!verdict.ok()) {
      // Without Kueue's word, deleting could kill admitted work: hold.
      message = "holding deletes: scale-down check failed: " + verdict.status().ToString();
    } else if (verdict->decision == kueue::ScaleDownDecision::kProceed) {
      held_.erase(t.key);
      return;
    } else {
      message = verdict->message;
      waited = static_cast<double>(verdict->waited.count());
    }
    // Hold the removals and whatever depends on them; the rest goes on.
    bool grew = true;
    while (grew) {
      grew = false;
      for (const auto& a : t.actions) {
        if (ids.count(a.resource.Id())) continue;
        for (const auto& d : a.depends_on)
          if (ids.count(d)) {
            ids.insert(a.resource.Id());
            grew = true;
            break;
          }
      }
    }
    t.actions.erase(std::remove_if(t.actions.begin(), t.actions.end(),
                                   [&](const plan::Action& a) { return ids.count(a.resource.Id()) > 0; }),
                    t.actions.end());
    ScaleDownWait wait{t.key, {}, message, waited};
    for (const auto& r : removals) wait.pools.push_back(r.node_pool);
    held_[t.key] = std::move(wait);
    if (!verdict.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      status_.kueue.last_error = verdict.status().ToString();
    }
    return;
  }
  held_.erase(target.Key());
}

void Reconciler::MaybeSyncKueue(const std::optional<manifest::Target>& target, bool planned, TimePoint now,
                                CycleReport& cycle) {
  const bool changed = kube_changed_.exchange(false);
  if (!planned && !changed && now < next_kueue_sync_) return;
  next_kueue_sync_ = now + options_.kueue_resync;
  if (!target) return;
  const kueue::KueueConfig config = kueue::KueueConfigFromPolicy(*target->policy.kueue);
  std::set<std::string> excluded;
  if (auto h = held_.find(target->Key()); h != held_.end())
    excluded.insert(h->second.pools.begin(), h->second.pools.end());
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_.kueue.queue = std::string(config.cohort_mode() ? "Cohort/" : "ClusterQueue/") + config.queue_name();
    status_.kueue.mode = ModeName(config.mode);
  }
  if (options_.dry_run) return;  // --dry-run writes nothing, in Kubernetes either
  auto report = options_.kueue->Sync(*target, config, excluded);
  last_kueue_target_ = target;
  {
    // Quota first in /status too: it is what a reader waits for.
    std::lock_guard<std::mutex> lock(mu_);
    if (!RecordQuota(report, cycle)) return;
  }
  // DWS after quota: the check goes on a queue the quota sync has made.
  auto flex = options_.kueue->SyncFlexStart(*target, config);
  auto bookings = options_.kueue->Bookings();
  std::lock_guard<std::mutex> lock(mu_);
  RecordFlexStart(flex, bookings, cycle);
}

// REQUIRES: mu_ held. False when the sync failed.
bool Reconciler::RecordQuota(const Result<kueue::QuotaReport>& report, CycleReport& cycle) {
  ++status_.kueue.syncs;
  if (!report.ok()) {
    ++status_.kueue.sync_errors;
    const std::string error = report.status().ToString();
    if (error != status_.kueue.last_error) cycle.warnings.push_back("kueue: " + error);
    status_.kueue.last_error = error;
    return false;
  }
  status_.kueue.last_error.clear();
  status_.kueue.api_version = report->api_version;
  if (report->wrote_queue) ++status_.kueue.queue_writes;
  status_.kueue.writes += report->writes;
  status_.kueue.skipped_writes += report->skipped_writes;
  status_.kueue.flavors.clear();
  for (const auto& f : report->flavors)
    status_.kueue.flavors.push_back(
        {f.flavor, f.accelerator, f.topology, f.declared_chips, f.ready_chips, f.nominal_quota,
         f.possible_chips});
  return true;
}

// REQUIRES: mu_ held.
void Reconciler::RecordFlexStart(const Result<kueue::FlexStartReport>& flex,
                                 const Result<kueue::BookingReport>& bookings, CycleReport& cycle) {
  FlexStartStatus& fs = status_.kueue.flex_start;
  if (!flex.ok()) {
    ++status_.kueue.sync_errors;
    const std::string error = flex.status().ToString();
    if (error != status_.kueue.last_error) cycle.warnings.push_back("kueue: " + error);
    status_.kueue.last_error = error;
  } else {
    fs.flavors = flex->flavors;
    fs.admission_check = flex->attached ? kueue::kFlexStartCheck : "";
    fs.note = flex->unattached_reason;
    status_.kueue.writes += flex->writes;
  }
  if (!bookings.ok()) {
    status_.kueue.last_error = bookings.status().ToString();
    return;
  }
  auto to_status = [](const std::vector<kueue::Booking>& from) {
    std::vector<BookingStatus> out;
    for (const auto& b : from) out.push_back({b.name, b.resize_request, b.node_pools, b.reason});
    return out;
  };
  fs.live = to_status(bookings->live);
  fs.expired = to_status(bookings->expired);
  fs.revoked = to_status(bookings->revoked);
}

}  // namespace tpu::daemon
