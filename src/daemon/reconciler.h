// Reconciler: one reconcile of the GitOps loop (docs/architecture.md, "The daemon"), as a library. The
// daemon's main loop calls RunOnce() on every wake-up; tests call it directly
// with a fake clock, a real git repository and the cloud emulator.
//
// A reconcile reads the source's current revision, loads it (parse cache by
// blob id), and decides what to re-plan:
//   - a drift check (the first reconcile, every drift_interval, or forced):
//     every target, against live state refreshed for every project;
//   - otherwise only targets whose files changed, whose backoff expired or
//     whose apply was interrupted, against the last refresh of their projects
//     (re-listed only when something of ours changed them since).
// It then applies with plan's safety rules: blocked and refused targets get
// nothing; --dry-run plans and reports only. A failed target backs off on its
// own (target_backoff.h); the others go on. A new head that does not descend
// from the last reconciled commit is reported; with refuse_history_rewrite the
// old commit stays in force until AcceptHistoryRewrite().
//
// Thread-safety: RunOnce, NextDue and AcceptHistoryRewrite from one thread
// (the loop); Snapshot and Cancel from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/clock.h"
#include "daemon/cloud_port.h"
#include "daemon/daemon_status.h"
#include "daemon/demand_hook.h"
#include "daemon/kueue_port.h"
#include "daemon/ladder_moves.h"
#include "daemon/nodes_port.h"
#include "daemon/notifier.h"
#include "source/revision_source.h"
#include "daemon/target_backoff.h"
#include "daemon/target_gate.h"
#include "daemon/target_signatures.h"
#include "manifest/loader.h"
#include "manifest/parse_cache.h"
#include "plan/planner.h"

namespace tpu::daemon {

struct ReconcilerOptions {
  bool dry_run = false;                 // plan and report; never mutate
  bool allow_mass_delete = false;       // --allow-mass-delete
  bool refuse_history_rewrite = false;  // hold the old commit after a force-push
  std::chrono::milliseconds drift_interval{std::chrono::minutes(5)};
  // How soon a slice that landed on a worse rung of its capacity ladder is
  // first tried on a better one again (ladder_moves.h); doubles after each failure.
  std::chrono::milliseconds ladder_retry{std::chrono::minutes(10)};
  BackoffPolicy backoff;
  manifest::LoadOptions load;
  std::string tool_version;
  // Demand-driven pools (demand_hook.h); null: git alone says what exists.
  // Must outlive the Reconciler.
  DemandHook* demand = nullptr;
  // Kueue quota and the scale-down gate (kueue_port.h); null: no Kubernetes.
  KueuePort* kueue = nullptr;
  // The target ("project/cluster") whose Cluster.spec.kueue the Kubernetes
  // cluster follows; "": the only target whose cluster.yaml has spec.kueue.
  std::string kube_target;
  // Quota is re-synced at least this often (ready mode follows Nodes between
  // revisions), and held scale-downs are checked again this often.
  std::chrono::milliseconds kueue_resync{std::chrono::seconds(30)};
  // TPUNodeGroup VMs joining the Kubernetes cluster (nodes_port.h); null: no
  // Kubernetes. Must outlive the Reconciler.
  NodesPort* nodes = nullptr;
  // Where events go (notifier.h); null: nowhere. Must not block; must outlive
  // the Reconciler.
  EventSink* events = nullptr;
  // The targets this replica owns (a shard of a sharded `watch`, docs/scaling.md):
  // only they are planned, applied and reported, and the Kueue target only
  // when owned. Null: every target.
  std::function<bool(const std::string& key)> owns;
};

// What one RunOnce did: the daemon's log line, and what tests assert.
struct CycleReport {
  bool ran = false;    // false: nothing was due (no change, no drift check, no retry)
  bool full = false;   // a drift check over every target
  std::string revision;
  std::vector<std::string> planned_targets;  // keys re-planned
  std::map<std::string, int> actions;        // executable actions planned, by kind (noop excluded)
  int applied = 0;
  int failed = 0;
  int waiting_for_capacity = 0;
  int blocked = 0;     // planned targets that are blocked or refused
  uint64_t files_parsed = 0;
  Status error;        // source, load or refresh failure
  std::vector<std::string> warnings;  // history rewrites, for the log
  std::chrono::milliseconds duration{0};
};

class Reconciler {
 public:
  // Every pointer must outlive the Reconciler.
  Reconciler(source::RevisionSource* source, CloudPort* cloud, const Clock* clock, ReconcilerOptions options);

  // One reconcile. `force_full` makes it a drift check (SIGHUP, lost inotify events).
  CycleReport RunOnce(bool force_full = false);
  // When a reconcile is due without any new revision: the next drift check or
  // the earliest backoff retry.
  TimePoint NextDue() const;
  // Takes the head a history rewrite moved to (--refuse-history-rewrite held
  // the old commit) and makes the next reconcile a drift check.
  void AcceptHistoryRewrite();
  // Stops the apply in progress and every later one (shutdown). Any thread.
  void Cancel();
  // Something the quota depends on changed in Kubernetes (a Node): the next
  // RunOnce syncs quota even if nothing else is due. Any thread.
  void NoteKubeChange() { kube_changed_ = true; }
  bool cancelled() const { return cancelled_; }

  DaemonStatus Snapshot() const;

 private:
  // This replica owns the target (always, unless sharded).
  bool Owns(const std::string& key) const { return !options_.owns || options_.owns(key); }

  struct ApplyOutcome {
    int done = 0, failed = 0, waiting = 0, cancelled = 0, skipped = 0;
    std::string first_error;
  };

  // One RunOnce's working state, handed from step to step (reconciler_cycle.cc).
  struct Cycle {
    TimePoint start, now;
    CycleReport report;
    source::Revision rev;
    std::optional<HistoryRewrite> rewrite;
    const manifest::Repo* repo = nullptr;  // owned by cache_
    TreeSignatures signatures;
    std::map<std::string, const manifest::Target*> declared;  // by key, into *repo
    std::optional<manifest::Target> kueue_target;  // as git declares it, before demand pools join
    std::string nodes_target;  // the key of the target whose TPUNodeGroups join; "" when none
    bool full = false;                    // a drift check
    std::set<std::string> selected;       // targets to re-plan when not full
    std::set<std::string> demand_due;     // targets the demand hook asks for
    plan::PlanOptions plan_options;
    std::vector<cloud::Operation> running;  // operations in flight, from the refresh
    std::map<std::string, Status> refresh_failed;  // by project
    plan::Plan plan, to_apply;
    std::set<std::string> eligible;       // targets with something to apply now
    std::map<std::string, GateDecision> gates;
    apply::ApplyReport applied;
    std::map<std::string, ApplyOutcome> outcomes;  // by target
    // Capacity ladder moves the gate held ("project/cluster/slot" → why).
    std::map<std::string, std::string> ladder_held;
    bool interrupted = false;
    // A force-push whose old commit stays in force.
    bool held() const { return rewrite && rewrite->held; }
  };
  // The steps, in order. Those returning bool return false when they ended
  // the cycle (its report finished).
  bool Fail(Cycle& c, const Status& s);
  bool ReadRevision(Cycle& c);
  bool LoadAndSelect(Cycle& c, bool force_full);
  std::set<std::string> ProjectsToList(const Cycle& c) const;
  bool RefreshSelected(Cycle& c);
  void PlanSelected(Cycle& c);
  void ApplyEligible(Cycle& c);
  void TallyOutcomes(Cycle& c);
  void EmitOutcomes(const Cycle& c);
  void ReportTargets(Cycle& c);
  // REQUIRES: mu_ held (both).
  void ReportPlanned(const plan::TargetPlan& t, Cycle& c);
  void ReportApplied(TargetReport& r, Cycle& c);
  void EndCycle(Cycle& c);

  // Lists `projects` into live_; returns the projects that failed, with why.
  std::map<std::string, Status> RefreshProjects(const std::vector<std::string>& projects,
                                                std::vector<cloud::Operation>* running);
  void RecordFailure(TargetReport& r, const std::string& error, TimePoint now, bool capacity);
  void FinishCycle(CycleReport& report, TimePoint start);
  // Kueue (reconciler_kueue.cc). The target this cluster's quota follows, as
  // git declares it; nullopt (and why, in status) when there is none.
  std::optional<manifest::Target> KueueTarget(const manifest::Repo& repo);
  // Holds the deletes and shrinks of `target`'s pools in `to_apply` while the
  // scale-down gate says wait; records the wait in held_.
  // Capacity ladder moves back up are never waited on: one the gate would
  // make wait is dropped, and why goes to `ladder_held`.
  void GateScaleDowns(const manifest::Target& target, plan::Plan* to_apply,
                      std::map<std::string, std::string>* ladder_held);
  // The capacity ladder moves due this pass, into c.plan_options (reconciler_ladder.cc).
  void ChooseLadderMoves(Cycle& c);
  // Writes quota when due: `planned` (the target was re-planned), a Kubernetes
  // change, or the resync interval.
  // A sync error is also a warning of `report` when it differs from the last one.
  void MaybeSyncKueue(const std::optional<manifest::Target>& target, bool planned, TimePoint now,
                      CycleReport& report);
  // The quota sync's report into /status; false when it failed (reconciler_kueue.cc).
  bool RecordQuota(const Result<kueue::QuotaReport>& report, CycleReport& cycle);
  // The DWS flex-start sync's report and the bookings into /status (reconciler_kueue.cc).
  void RecordFlexStart(const Result<kueue::FlexStartReport>& flex, const Result<kueue::BookingReport>& bookings,
                       CycleReport& cycle);
  void Emit(std::string type, std::string target, std::string revision, std::string text,
            nlohmann::json details = nlohmann::json::object()) {
    if (options_.events)
      options_.events->Notify({std::move(type), std::move(target), std::move(revision), std::move(text),
                               std::move(details)});
  }
  // The node join (reconciler_nodes.cc): the joining target's groups handed
  // over, and the nodes of groups about to be torn down cordoned.
  void HandNodeGroups(Cycle& c);
  void CordonBeforeTeardown(const Cycle& c);
  // How each joining group's Compute objects fared in the apply.
  void ReportApplyToNodes(const Cycle& c);
  // Drift mode, cleanupOnly and change windows (reconciler_gate.cc): trims
  // `to_apply` to what may run now, drops targets left with nothing from
  // `eligible`, and returns each gated target's decision for its report.
  std::map<std::string, GateDecision> GatePlan(const manifest::Repo& repo, const std::set<std::string>& changed,
                                               const source::Revision& rev, plan::Plan* to_apply,
                                               std::set<std::string>* eligible, TimePoint now);
  // After the apply: what the gate decided, into each target's report.
  // REQUIRES: mu_ held.
  void ReportGates(const plan::Plan& plan, const std::map<std::string, GateDecision>& gates,
                   const std::set<std::string>& eligible, const manifest::Repo& repo);

  source::RevisionSource* source_;
  CloudPort* cloud_;
  const Clock* clock_;
  const ReconcilerOptions options_;

  // Reads the commit a previous run reconciled, once.
  void LoadApplied(CycleReport& report);
  // `commit` is now reconciled: remembered here and, but under --dry-run, by the source.
  void NoteApplied(const std::string& commit, CycleReport& report);

  // Loop-thread state.
  manifest::ParseCache cache_;
  TreeSignatures signatures_;
  bool initialized_ = false;
  bool force_full_next_ = false;
  TimePoint next_drift_{};
  TimePoint source_retry_at_{};  // no revision could be read yet: try again then
  cloud::LiveState live_;
  std::set<std::string> stale_projects_;  // mutated by us since their last refresh
  std::set<std::string> known_projects_;  // every project ever seen (vanished targets)
  std::set<std::string> interrupted_;     // targets whose apply was cancelled
  TargetBackoff backoff_;
  std::string applied_commit_;  // the commit last reconciled (history checks)
  bool applied_loaded_ = false;  // applied_commit_ read from the source (kept across restarts)
  std::string applied_stored_;   // what the source keeps now
  std::string rewrite_seen_;    // the head of the latest rewrite reported
  std::string rewrite_accepted_;
  std::atomic<bool> cancelled_{false};
  // Kueue, loop-thread state.
  std::atomic<bool> kube_changed_{false};
  TimePoint next_kueue_sync_{};
  std::map<std::string, ScaleDownWait> held_;  // by target key: deletes the gate holds
  std::optional<manifest::Target> last_kueue_target_;  // shapes of pools being removed
  // The gate (target_gate.h), loop-thread state.
  std::map<std::string, manifest::Target> warn_baseline_;  // desired state last applied, warn targets
  std::set<std::string> unapplied_changes_;  // targets whose changed manifests are not applied yet
  std::set<std::string> window_held_;        // targets with actions a change window holds
  std::optional<TimePoint> next_window_;     // the earliest of their windows' openings
  std::map<std::string, int64_t> drift_since_;  // by target: wall seconds drift was first seen
  std::string nodes_target_;  // the target whose TPUNodeGroups joined last (loop-thread state)
  LadderMoves ladder_;        // capacity ladder moves back up (loop-thread state)

  mutable std::mutex mu_;
  DaemonStatus status_;                          // guarded by mu_
  std::map<std::string, TargetReport> reports_;  // guarded by mu_
};

}  // namespace tpu::daemon
