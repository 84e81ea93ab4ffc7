// MetricsText: see metrics_text.h.
#include "daemon/metrics_text.h"

#include <cstdio>

namespace tpu::daemon {
namespace {

constexpr const char* kNs = "tpu_provisioner_";

class Writer {
 public:
  void Family(const std::string& name, const char* type, const char* help) {
    out_ += "# HELP " + std::string(kNs) + name + " " + help + "\n";
    out_ += "# TYPE " + std::string(kNs) + name + " " + type + "\n";
  }
  void Sample(const std::string& name, const std::string& labels, double value) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", value);
    out_ += std::string(kNs) + name + (labels.empty() ? "" : "{" + labels + "}") + " " + buf + "\n";
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string Label(const std::string& name, const std::string& value) {
  return name + "=\"" + EscapeLabel(value) + "\"";
}

std::string FormatLe(double le) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", le);
  return buf;
}

// Reconciles: their durations, results, planned and applied actions.
void ReconcileMetrics(Writer& w, const DaemonStatus& s) {
  w.Family("reconcile_duration_seconds", "histogram", "Duration of reconciles that did work.");
  for (const auto& [le, n] : s.duration_buckets)
    w.Sample("reconcile_duration_seconds_bucket", Label("le", FormatLe(le)), static_cast<double>(n));
  w.Sample("reconcile_duration_seconds_bucket", Label("le", "+Inf"), static_cast<double>(s.duration_count));
  w.Sample("reconcile_duration_seconds_sum", "", s.duration_sum);
  w.Sample("reconcile_duration_seconds_count", "", static_cast<double>(s.duration_count));

  w.Family("reconciles_total", "counter", "Reconciles that did work, by result.");
  w.Sample("reconciles_total", Label("result", "ok"), static_cast<double>(s.reconciles - s.reconcile_errors));
  w.Sample("reconciles_total", Label("result", "error"), static_cast<double>(s.reconcile_errors));

  w.Family("plan_actions_total", "counter", "Executable plan actions by kind (noop excluded).");
  for (const char* kind : {"create", "update", "resize", "replace", "delete"}) {
    auto it = s.planned_actions.find(kind);
    w.Sample("plan_actions_total", Label("kind", kind),
             it == s.planned_actions.end() ? 0.0 : static_cast<double>(it->second));
  }
  w.Family("apply_actions_total", "counter", "Applied actions by result.");
  for (const auto& [result, n] : s.applied_actions)
    w.Sample("apply_actions_total", Label("result", result), static_cast<double>(n));
}

// Cloud API calls and operations in flight.
void CloudMetrics(Writer& w, const DaemonStatus& s, const ExtraMetrics& extra) {
  w.Family("api_calls_total", "counter", "Cloud API calls by HTTP method and status code.");
  for (const auto& [key, n] : extra.api_calls) {
    size_t space = key.find(' ');
    std::string method = key.substr(0, space);
    std::string code = space == std::string::npos ? "" : key.substr(space + 1);
    w.Sample("api_calls_total", Label("method", method) + "," + Label("code", code), static_cast<double>(n));
  }
  w.Family("operations_in_flight", "gauge", "Apply tasks started and not finished.");
  w.Sample("operations_in_flight", "", extra.operations_in_flight);
}

// Per target: chips, drift, held actions, state; the revision applied.
void TargetMetrics(Writer& w, const DaemonStatus& s) {
  w.Family("declared_chips", "gauge", "TPU chips the manifests declare, per target.");
  for (const auto& t : s.targets) w.Sample("declared_chips", Label("target", t.key), t.declared_chips);
  w.Family("live_chips", "gauge", "TPU chips in owned live resources, per target.");
  for (const auto& t : s.targets) w.Sample("live_chips", Label("target", t.key), t.live_chips);
  w.Family("drift_resources", "gauge", "Resources drifted from git and not corrected (spec.drift: warn), per target.");
  for (const auto& t : s.targets)
    w.Sample("drift_resources", Label("target", t.key), t.drift_corrected ? 0 : static_cast<int>(t.drift.size()));
  w.Family("drift_seconds", "gauge", "Seconds since drift was first seen, per target (0: none).");
  for (const auto& t : s.targets) w.Sample("drift_seconds", Label("target", t.key), t.drift_seconds);
  w.Family("held_actions", "gauge", "Actions a change window or cleanupOnly holds, per target.");
  for (const auto& t : s.targets) w.Sample("held_actions", Label("target", t.key), t.held_actions);
  w.Family("target_state", "gauge", "1 for each target's current state.");
  for (const auto& t : s.targets)
    w.Sample("target_state", Label("target", t.key) + "," + Label("state", TargetStateName(t.state)), 1);

  w.Family("last_applied_revision", "gauge", "The revision last reconciled to the end (as a label).");
  if (!s.last_applied_revision.empty())
    w.Sample("last_applied_revision", Label("revision", s.last_applied_revision), 1);
}

// Parsing, refreshes, fetches, the webhook, readiness.
void SourceMetrics(Writer& w, const DaemonStatus& s, const ExtraMetrics& extra) {
  w.Family("files_parsed_total", "counter", "Manifest files parsed (parse-cache misses).");
  w.Sample("files_parsed_total", "", static_cast<double>(s.files_parsed));
  w.Family("files_parsed_last_load", "gauge", "Manifest files parsed by the latest load.");
  w.Sample("files_parsed_last_load", "", static_cast<double>(s.files_parsed_last));
  w.Family("history_rewrites_total", "counter", "New heads that did not descend from the applied commit.");
  w.Sample("history_rewrites_total", "", static_cast<double>(s.history_rewrites));
  w.Family("refreshes_total", "counter", "Live-state refreshes.");
  w.Sample("refreshes_total", "", static_cast<double>(s.refreshes));

  w.Family("fetches_total", "counter", "Fetches of a remote source, by result.");
  for (const char* r : {"ok", "error"}) {
    auto it = extra.fetches.find(r);
    w.Sample("fetches_total", Label("result", r), it == extra.fetches.end() ? 0.0 : static_cast<double>(it->second));
  }
  w.Family("webhook_requests_total", "counter", "POST /hooks/git calls, by result.");
  for (const auto& [r, n] : extra.webhook_requests)
    w.Sample("webhook_requests_total", Label("result", r), static_cast<double>(n));
  w.Family("ready", "gauge", "1 after the first complete reconcile.");
  w.Sample("ready", "", s.ready ? 1 : 0);
}

// Kueue: chips and quota per flavor, syncs, writes, held scale-downs.
void KueueMetrics(Writer& w, const DaemonStatus& s) {
  if (!s.kueue.enabled) return;
  w.Family("kueue_declared_chips", "gauge", "TPU chips git declares, per Kueue ResourceFlavor.");
  for (const auto& f : s.kueue.flavors) w.Sample("kueue_declared_chips", Label("flavor", f.flavor), f.declared_chips);
  w.Family("kueue_ready_chips", "gauge", "TPU chips on Ready, schedulable nodes, per ResourceFlavor.");
  for (const auto& f : s.kueue.flavors) w.Sample("kueue_ready_chips", Label("flavor", f.flavor), f.ready_chips);
  w.Family("kueue_nominal_quota", "gauge", "google.com/tpu nominalQuota written, per ResourceFlavor.");
  for (const auto& f : s.kueue.flavors) w.Sample("kueue_nominal_quota", Label("flavor", f.flavor), f.nominal_quota);
  w.Family("kueue_syncs_total", "counter", "Quota syncs, by result.");
  w.Sample("kueue_syncs_total", Label("result", "ok"), static_cast<double>(s.kueue.syncs - s.kueue.sync_errors));
  w.Sample("kueue_syncs_total", Label("result", "error"), static_cast<double>(s.kueue.sync_errors));
  w.Family("kueue_writes_total", "counter",
           "Kueue objects (ResourceFlavors, the queue) a sync wrote, and those it skipped because the server "
           "already held exactly what it would write.");
  w.Sample("kueue_writes_total", Label("result", "written"), static_cast<double>(s.kueue.writes));
  w.Sample("kueue_writes_total", Label("result", "skipped"), static_cast<double>(s.kueue.skipped_writes));
  w.Family("kueue_scale_down_waiting", "gauge", "Node pools whose delete or shrink waits for admitted workloads.");
  for (const auto& wait : s.kueue.scale_down_waits)
    w.Sample("kueue_scale_down_waiting", Label("target", wait.target), static_cast<double>(wait.pools.size()));
  const FlexStartStatus& f = s.kueue.flex_start;
  w.Family("kueue_flex_start_bookings", "gauge",
           "DWS bookings (queued-provisioning ProvisioningRequests): live, BookingExpired, CapacityRevoked.");
  w.Sample("kueue_flex_start_bookings", Label("state", "live"), static_cast<double>(f.live.size()));
  w.Sample("kueue_flex_start_bookings", Label("state", "expired"), static_cast<double>(f.expired.size()));
  w.Sample("kueue_flex_start_bookings", Label("state", "revoked"), static_cast<double>(f.revoked.size()));
}

// A sharded watch: shards held, targets owned, and how shards moved.
void ShardMetrics(Writer& w, const ShardStatus& s) {
  const std::string id = Label("identity", s.identity);
  w.Family("shards_held", "gauge", "Shards this replica holds.");
  w.Sample("shards_held", id, static_cast<double>(s.held.size()));
  w.Family("shard_targets_owned", "gauge", "Declared targets in the shards this replica holds.");
  w.Sample("shard_targets_owned", id, s.owned_targets);
  w.Family("shard_live_replicas", "gauge", "Replicas with a live membership Lease, as this one counts them.");
  w.Sample("shard_live_replicas", id, s.live_replicas);
  w.Family("shard_takeovers_total", "counter", "Shards taken over from a replica whose Lease expired.");
  w.Sample("shard_takeovers_total", id, static_cast<double>(s.takeovers));
  w.Family("shard_acquired_total", "counter", "Shards acquired, free or expired.");
  w.Sample("shard_acquired_total", id, static_cast<double>(s.acquired));
  w.Family("shard_released_total", "counter", "Shards given back (over the fair share, or at shutdown).");
  w.Sample("shard_released_total", id, static_cast<double>(s.released));
  w.Family("shard_lost_total", "counter", "Shards found taken by another replica, or whose renew conflicted.");
  w.Sample("shard_lost_total", id, static_cast<double>(s.lost));
}

// TPUNodeGroup VMs and the nodes they became, per group; the join's work.
void NodeGroupMetrics(Writer& w, const NodeGroupsStatus& s) {
  w.Family("node_group_vms", "gauge",
           "TPUNodeGroup VMs by stage: requested (spec.nodeCount), instances, running, joined (a Node), ready.");
  for (const auto& g : s.groups) {
    const std::string group = Label("group", g.name);
    for (const auto& [stage, n] : std::vector<std::pair<const char*, int>>{
             {"requested", g.requested}, {"instances", g.instances}, {"running", g.running},
             {"joined", g.joined}, {"ready", g.ready}})
      w.Sample("node_group_vms", group + "," + Label("stage", stage), n);
  }
  w.Family("node_group_failed", "gauge", "1 while a TPUNodeGroup is Failed, labelled with the reason.");
  for (const auto& g : s.groups)
    w.Sample("node_group_failed", Label("group", g.name) + "," + Label("reason", g.reason), g.phase == "Failed");
  w.Family("node_join_actions_total", "counter",
           "Work of the node join: bootstrap tokens issued, revoked after the join, expired; Node labels "
           "patched; Nodes cordoned and deleted at teardown; failed calls.");
  const auto& c = s.counters;
  for (const auto& [action, n] : std::vector<std::pair<const char*, int64_t>>{
           {"token_issued", c.tokens_issued}, {"token_revoked", c.tokens_revoked},
           {"token_expired", c.tokens_expired}, {"labels_patched", c.labels_patched},
           {"node_cordoned", c.nodes_cordoned}, {"node_deleted", c.nodes_deleted}, {"error", c.errors}})
    w.Sample("node_join_actions_total", Label("action", action), static_cast<double>(n));
}

// Demand-driven pools, the Kubernetes watches, the leader Lease, the shards.
void KubeMetrics(Writer& w, const DaemonStatus& s, const ExtraMetrics& extra) {
  if (s.demand.enabled) {
    w.Family("demand_pools", "gauge", "Demand-driven (workload-owned) node pools, as last decided.");
    w.Sample("demand_pools", "", static_cast<double>(s.demand.pools.size()));
    w.Family("demand_chips", "gauge", "TPU chips in demand-driven node pools.");
    w.Sample("demand_chips", "", s.demand.chips);
    w.Family("demand_events_total", "counter", "Kubernetes Events recorded for demand (refusals, creates).");
    w.Sample("demand_events_total", "", static_cast<double>(s.demand.events));
  }
  if (!extra.kube_watch_lists.empty()) {
    w.Family("kube_watch_lists_total", "counter", "Full lists by the Kubernetes watches (re-lists after 410 Gone).");
    for (const auto& [r, n] : extra.kube_watch_lists)
      w.Sample("kube_watch_lists_total", Label("resource", r), static_cast<double>(n));
    w.Family("kube_watch_errors_total", "counter", "Failed Kubernetes lists and watches.");
    for (const auto& [r, n] : extra.kube_watch_errors)
      w.Sample("kube_watch_errors_total", Label("resource", r), static_cast<double>(n));
  }
  if (s.leader.enabled) {
    w.Family("leader", "gauge", "1 while this replica holds the leader Lease.");
    w.Sample("leader", Label("identity", s.leader.identity), s.leader.leader ? 1 : 0);
  }
  if (s.shards.enabled) ShardMetrics(w, s.shards);
  if (s.node_groups.enabled) NodeGroupMetrics(w, s.node_groups);
}

}  // namespace

std::string EscapeLabel(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string MetricsText(const DaemonStatus& s, const ExtraMetrics& extra) {
  Writer w;
  ReconcileMetrics(w, s);
  CloudMetrics(w, s, extra);
  TargetMetrics(w, s);
  SourceMetrics(w, s, extra);
  KueueMetrics(w, s);
  KubeMetrics(w, s, extra);
  return w.Take();
}

}  // namespace tpu::daemon
