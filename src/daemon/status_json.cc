// StatusJson: see status_json.h.
#include "daemon/status_json.h"

#include "base/change_windows.h"

namespace tpu::daemon {
namespace {

// Changes made behind git's back, as the target's latest plan found them.
nlohmann::json DriftJson(const TargetReport& t) {
  return {{"mode", t.drift_mode},
          {"resources", t.drift_corrected ? 0 : static_cast<int>(t.drift.size())},
          {"actions", t.drift},
          {"corrected", t.drift_corrected},
          {"firstSeen", t.drift_since ? nlohmann::json(FormatRfc3339(t.drift_since)) : nlohmann::json(nullptr)},
          {"sinceSeconds", t.drift_seconds}};
}

// What waits, why and until when (a change window's opening; null: unknown).
nlohmann::json HeldJson(const TargetReport& t) {
  return {{"actions", t.held_actions},
          {"reason", t.held_reason},
          {"until", t.held_until ? nlohmann::json(FormatRfc3339(t.held_until)) : nlohmann::json(nullptr)}};
}

// TPUNodeGroup VMs and their nodes, per group, and the join's counters.
nlohmann::json NodeGroupsJson(const NodeGroupsStatus& s) {
  using nlohmann::json;
  json groups = json::array();
  for (const auto& g : s.groups)
    groups.push_back({{"name", g.name}, {"phase", g.phase}, {"reason", g.reason}, {"message", g.message},
                      {"requested", g.requested}, {"instances", g.instances}, {"running", g.running},
                      {"joined", g.joined}, {"ready", g.ready}, {"lastError", g.last_error}});
  const auto& c = s.counters;
  return {{"target", s.target}, {"groups", groups}, {"passes", s.passes},
          {"tokensIssued", c.tokens_issued}, {"tokensRevoked", c.tokens_revoked},
          {"tokensExpired", c.tokens_expired}, {"labelsPatched", c.labels_patched},
          {"nodesCordoned", c.nodes_cordoned}, {"nodesDeleted", c.nodes_deleted}, {"errors", c.errors}};
}

// DWS flex-start: our admission check and the bookings (kueue/bookings.h).
nlohmann::json FlexStartJson(const FlexStartStatus& f) {
  using nlohmann::json;
  auto bookings = [](const std::vector<BookingStatus>& from) {
    json out = json::array();
    for (const auto& b : from)
      out.push_back({{"name", b.name}, {"resizeRequest", b.resize_request}, {"nodePools", b.node_pools},
                     {"reason", b.reason}});
    return out;
  };
  return {{"flavors", f.flavors},           {"admissionCheck", f.admission_check},
          {"note", f.note},                 {"liveBookings", bookings(f.live)},
          {"expiredBookings", bookings(f.expired)}, {"revokedBookings", bookings(f.revoked)}};
}

// One target of /status.
nlohmann::json TargetJson(const TargetReport& t) {
  using nlohmann::json;
  json reservations = json::array();
  for (const auto& r : t.reservations)
    reservations.push_back({{"name", r.name}, {"project", r.project}, {"zone", r.zone}, {"found", r.found},
                            {"count", r.count}, {"inUse", r.in_use}, {"freeBefore", r.FreeBefore()},
                            {"freeAfter", r.FreeAfter()}, {"blocked", r.blocked}});
  json plan = {{"create", t.last_plan.create},           {"update", t.last_plan.update},
               {"replace", t.last_plan.replace},         {"delete", t.last_plan.remove},
               {"noop", t.last_plan.noop},               {"chipsCreated", t.last_plan.chips_created},
               {"chipsDestroyed", t.last_plan.chips_destroyed}, {"actions", t.last_plan_actions}};
  return {{"target", t.key},
          {"state", TargetStateName(t.state)},
          {"revision", t.revision},
          {"lastPlan", plan},
          {"errors", t.errors},
          {"lastError", t.last_error},
          {"consecutiveFailures", t.consecutive_failures},
          {"retryInSeconds", t.retry_in_seconds},
          {"declaredChips", t.declared_chips},
          {"liveChips", t.live_chips},
          {"reservations", reservations},
          {"vanished", t.vanished},
          {"drift", DriftJson(t)},
          {"held", HeldJson(t)}};
}

// Slices below their best capacity rung (daemon/ladder_moves.h).
nlohmann::json LadderJson(const std::vector<LadderSliceStatus>& slices) {
  using nlohmann::json;
  json out = json::array();
  for (const auto& l : slices)
    out.push_back({{"target", l.target}, {"pool", l.pool}, {"rung", l.rung}, {"rungs", l.rungs},
                   {"capacity", l.capacity}, {"tries", l.tries}, {"failures", l.failures},
                   {"nextTrySeconds", l.next_try_seconds}, {"last", l.last}});
  return out;
}

}  // namespace

nlohmann::json StatusJson(const DaemonStatus& s) {
  using nlohmann::json;
  json targets = json::array();
  for (const auto& t : s.targets) targets.push_back(TargetJson(t));
  json rewrite = nullptr;
  if (s.history_rewrite)
    rewrite = {{"from", s.history_rewrite->from}, {"to", s.history_rewrite->to},
               {"held", s.history_rewrite->held}};
  json kueue = nullptr;
  if (s.kueue.enabled) {
    json flavors = json::array();
    for (const auto& f : s.kueue.flavors)
      flavors.push_back({{"flavor", f.flavor}, {"accelerator", f.accelerator}, {"topology", f.topology},
                         {"declaredChips", f.declared_chips}, {"readyChips", f.ready_chips},
                         {"nominalQuota", f.nominal_quota}, {"possibleChips", f.possible_chips}});
    json waits = json::array();
    for (const auto& w : s.kueue.scale_down_waits)
      waits.push_back({{"target", w.target}, {"pools", w.pools}, {"message", w.message},
                       {"waitedSeconds", w.waited_seconds}});
    kueue = {{"target", s.kueue.target},       {"queue", s.kueue.queue},
             {"mode", s.kueue.mode},           {"apiVersion", s.kueue.api_version},
             {"flavors", flavors},             {"scaleDownWaits", waits},
             {"lastError", s.kueue.last_error}, {"syncs", s.kueue.syncs},
             {"syncErrors", s.kueue.sync_errors}, {"queueWrites", s.kueue.queue_writes},
             {"writes", s.kueue.writes},       {"skippedWrites", s.kueue.skipped_writes},
             {"flexStart", FlexStartJson(s.kueue.flex_start)}};
  }
  json demand = nullptr;
  if (s.demand.enabled) {
    json pools = json::array();
    for (const auto& p : s.demand.pools)
      pools.push_back({{"name", p.name}, {"jobset", p.jobset}, {"status", p.status},
                       {"chips", p.chips}, {"state", p.state}});
    demand = {{"target", s.demand.target}, {"synced", s.demand.synced}, {"pools", pools},
              {"chips", s.demand.chips}, {"error", s.demand.error}, {"events", s.demand.events}};
  }
  json leader = nullptr;
  if (s.leader.enabled)
    leader = {{"leader", s.leader.leader}, {"identity", s.leader.identity}, {"lease", s.leader.lease}};
  json shards = nullptr;
  if (s.shards.enabled)
    shards = {{"identity", s.shards.identity}, {"shards", s.shards.shards}, {"held", s.shards.held},
              {"liveReplicas", s.shards.live_replicas}, {"fairShare", s.shards.fair_share},
              {"ownedTargets", s.shards.owned_targets}, {"acquired", s.shards.acquired},
              {"takeovers", s.shards.takeovers}, {"released", s.shards.released}, {"lost", s.shards.lost},
              {"errors", s.shards.errors}, {"lastError", s.shards.last_error}};
  return {{"source", s.source},
          {"revision", s.revision},
          {"lastAppliedRevision", s.last_applied_revision},
          {"ready", s.ready},
          {"dryRun", s.dry_run},
          {"lastError", s.last_error},
          {"repoErrors", s.repo_errors},
          {"historyRewrite", rewrite},
          {"historyRewrites", s.history_rewrites},
          {"targets", targets},
          {"kueue", kueue},
          {"capacityLadder", LadderJson(s.ladder)},
          {"workloadPools", demand},
          {"nodeGroups", s.node_groups.enabled ? NodeGroupsJson(s.node_groups) : json(nullptr)},
          {"leaderElection", leader},
          {"shards", shards}};
}

}  // namespace tpu::daemon
