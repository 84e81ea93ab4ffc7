// The steps of Reconciler::RunOnce (reconciler.h), in the order it runs them.
// Each step reads and fills the cycle's working state; a step that ends the
// cycle early (nothing due, no revision, every project unreadable) finishes
// its report and returns false.
#include <algorithm>

#include "daemon/reconciler.h"
#include "daemon/target_report.h"
#include "plan/planner.h"
#include "plan/reservations.h"

namespace tpu::daemon {
namespace {

std::string ProjectOf(const std::string& key) { return key.substr(0, key.find('/')); }

}  // namespace

bool Reconciler::Fail(Cycle& c, const Status& s) {
  c.report.ran = true;
  c.report.error = s;
  // Before a first reconcile NextDue() would say "now" forever: retry on
  // the backoff's first delay instead (inotify, a poll or a webhook may
  // wake the loop sooner).
  if (!initialized_) source_retry_at_ = c.now + options_.backoff.initial;
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_.last_error = s.ToString();
  }
  FinishCycle(c.report, c.start);
  return false;
}

// 1. The revision, checked against the last reconciled commit.
bool Reconciler::ReadRevision(Cycle& c) {
  auto current = source_->Current();
  if (!current.ok()) return Fail(c, current.status());
  c.rev = std::move(current.value());
  if (c.rev.is_commit) LoadApplied(c.report);
  if (c.rev.is_commit && !applied_commit_.empty() && c.rev.id != applied_commit_) {
    auto descends = source_->DescendsFrom(c.rev.id, applied_commit_);
    if (!descends.ok() || !*descends) {
      c.rewrite = HistoryRewrite{applied_commit_, c.rev.id, false};
      if (rewrite_seen_ != c.rev.id) {
        rewrite_seen_ = c.rev.id;
        c.report.warnings.push_back("history rewrite: " + c.rev.id + " does not descend from " +
                                    applied_commit_ + " (force-push?)" +
                                    (options_.refuse_history_rewrite ? "; holding " + applied_commit_ : ""));
        Emit("history.rewrite", "", c.rev.id, c.report.warnings.back(),
             {{"from", applied_commit_}, {"to", c.rev.id}, {"held", options_.refuse_history_rewrite}});
        std::lock_guard<std::mutex> lock(mu_);
        ++status_.history_rewrites;
      }
      if (options_.refuse_history_rewrite && rewrite_accepted_ != c.rev.id) {
        c.rewrite->held = true;
        auto held = source_->AtCommit(applied_commit_);
        if (!held.ok()) return Fail(c, held.status());
        c.rev = std::move(held.value());
      }
    }
  }
  if (c.rewrite) {
    std::lock_guard<std::mutex> lock(mu_);
    status_.history_rewrite = c.rewrite;
  }
  c.report.revision = c.rev.id;
  return true;
}

// 2. Load and see what changed. Targets whose directory listing is as it was
// are carried over from the previous load and changed files come from the
// parse cache, so a one-file commit rebuilds one target; the signatures
// reuse the load's listings.
bool Reconciler::LoadAndSelect(Cycle& c, bool force_full) {
  c.repo = &manifest::LoadRepoIncremental(*c.rev.tree, options_.load, &cache_);
  c.report.files_parsed = cache_.last_load_parses();
  c.signatures = ComputeSignatures(*c.rev.tree, cache_);
  for (const auto& t : c.repo->targets) c.declared[t.Key()] = &t;
  // Copied before demand-driven pools join: quota follows what git declares.
  if (options_.kueue) c.kueue_target = KueueTarget(*c.repo);
  if (c.kueue_target && !Owns(c.kueue_target->Key())) c.kueue_target.reset();
  if (options_.nodes) HandNodeGroups(c);

  c.full = force_full || force_full_next_ || !initialized_ || c.now >= next_drift_;
  // Asked every pass (the hook forgets what it reported); a drift check
  // plans every target anyway.
  if (options_.demand) c.demand_due = options_.demand->TargetsDue(c.now);
  if (!c.full) {
    c.selected = ChangedTargets(signatures_, c.signatures);
    c.selected.insert(c.demand_due.begin(), c.demand_due.end());
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, r] : reports_)
      if (backoff_.RetryDue(key, c.now)) c.selected.insert(key);
    c.selected.insert(interrupted_.begin(), interrupted_.end());
    // Held scale-downs are asked again on every pass (the resync interval
    // makes one at least that often).
    for (const auto& [key, wait] : held_) c.selected.insert(key);
    // So are targets a change window held: it may have opened.
    c.selected.insert(window_held_.begin(), window_held_.end());
    // And targets with a capacity ladder move due, listed afresh: the move
    // depends on where the slice and its reservations stand now.
    for (const auto& key : ladder_.TargetsDue(c.now)) {
      c.selected.insert(key);
      stale_projects_.insert(ProjectOf(key));
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_.revision = c.rev.id;
    status_.repo_errors.clear();
    for (const auto& e : c.repo->errors) status_.repo_errors.push_back(e.ToString());
  }
  if (!c.full && c.selected.empty()) {
    // Nothing of deploy/ changed: this revision is reconciled as it stands.
    signatures_ = std::move(c.signatures);
    if (c.rev.is_commit && !c.held()) NoteApplied(c.rev.id, c.report);
    if (options_.kueue) MaybeSyncKueue(c.kueue_target, false, c.now, c.report);
    FinishCycle(c.report, c.start);
    return false;
  }
  c.report.ran = true;
  c.report.full = c.full;
  force_full_next_ = false;
  return true;
}

// Every project on a drift check; otherwise only projects never listed or
// changed by us since their last listing.
std::set<std::string> Reconciler::ProjectsToList(const Cycle& c) const {
  std::set<std::string> projects;
  for (const auto& p : plan::ProjectsToRefresh(*c.repo, c.plan_options)) projects.insert(p);
  if (c.full) {
    projects.insert(known_projects_.begin(), known_projects_.end());
    return projects;
  }
  for (auto it = projects.begin(); it != projects.end();) {
    bool retry = false;
    for (const auto& key : c.selected)
      if (ProjectOf(key) == *it && backoff_.failures(key) > 0) retry = true;
    // Demand decisions read pool states and running operations: always fresh.
    for (const auto& key : c.demand_due)
      if (ProjectOf(key) == *it) retry = true;
    if (live_.projects.count(*it) && !stale_projects_.count(*it) && !retry) it = projects.erase(it);
    else ++it;
  }
  return projects;
}

// 3. Live state of the projects the selected targets need.
bool Reconciler::RefreshSelected(Cycle& c) {
  c.plan_options.allow_mass_delete = options_.allow_mass_delete;
  c.plan_options.tool_version = options_.tool_version;
  c.plan_options.fingerprint_live = false;  // plans are applied here, never saved
  c.plan_options.owns = options_.owns;
  if (!c.full) c.plan_options.only_targets.assign(c.selected.begin(), c.selected.end());
  const std::set<std::string> projects = ProjectsToList(c);
  // Every target's, not only the selected ones': live_ keeps every project.
  cloud_->NameReservations(plan::ReservationsNamedBy(*c.repo, {}));
  c.refresh_failed = RefreshProjects({projects.begin(), projects.end()}, &c.running);
  if (!c.refresh_failed.empty()) {
    // Targets of projects that could not be listed fail (and back off); the
    // rest are planned as usual.
    std::set<std::string> keys = c.selected;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (c.full) {
        for (const auto& t : c.repo->targets) keys.insert(t.Key());
        for (const auto& [key, r] : reports_) keys.insert(key);
      }
      for (const auto& key : keys) {
        auto f = c.refresh_failed.find(ProjectOf(key));
        if (f == c.refresh_failed.end()) continue;
        TargetReport& r = reports_[key];
        r.key = key;
        r.revision = c.rev.id;
        RecordFailure(r, f->second.ToString(), c.now, false);
      }
      status_.last_error = c.refresh_failed.begin()->second.ToString();
    }
    c.report.error = c.refresh_failed.begin()->second;
    std::vector<std::string> keep;
    for (const auto& key : keys)
      if (!c.refresh_failed.count(ProjectOf(key))) keep.push_back(key);
    if (keep.empty()) {
      if (c.full) next_drift_ = backoff_.NextRetry().value_or(c.now + options_.drift_interval);
      initialized_ = true;
      signatures_ = std::move(c.signatures);
      FinishCycle(c.report, c.start);
      return false;
    }
    c.plan_options.only_targets = keep;
  }
  if (c.full) next_drift_ = c.now + options_.drift_interval;
  return true;
}

// 4. Plan, then keep for apply the executable targets with changes that are
// not backing off (a changed target is tried at once: it may be the fix).
void Reconciler::PlanSelected(Cycle& c) {
  if (options_.demand) options_.demand->SetRevision(*c.repo);
  ChooseLadderMoves(c);
  c.plan = plan::ComputePlan(*c.repo, live_, c.plan_options);
  if (options_.demand) {
    // Workload-owned pools: actions of their own, outside git's diff and guards.
    for (auto& tp : c.plan.targets) {
      if (!tp.executable() || (!c.full && !c.selected.count(tp.key))) continue;
      auto t = c.declared.find(tp.key);
      if (t == c.declared.end() || t->second->blocked()) continue;
      for (auto& a : options_.demand->ExtraActions(*t->second, live_)) tp.actions.push_back(std::move(a));
    }
  }
  const std::set<std::string> changed = c.full ? ChangedTargets(signatures_, c.signatures) : c.selected;
  c.to_apply = c.plan;
  c.to_apply.targets.clear();
  for (const auto& t : c.plan.targets) {
    c.report.planned_targets.push_back(t.key);
    if (!t.executable()) {
      if (t.status == plan::TargetStatus::kBlocked || t.status == plan::TargetStatus::kRefused)
        ++c.report.blocked;
      continue;
    }
    bool has_changes = false;
    for (const auto& a : t.actions)
      if (a.changes_something()) {
        has_changes = true;
        ++c.report.actions[plan::ActionKindName(a.kind)];
      }
    if (!has_changes) continue;
    if (!backoff_.Ready(t.key, c.now) && !changed.count(t.key) && !interrupted_.count(t.key)) continue;
    c.eligible.insert(t.key);
    c.to_apply.targets.push_back(t);
  }

  // The scale-down gate: deletes and shrinks of the Kueue target's pools wait
  // while admitted workloads need their chips; the rest of the plan goes on.
  if (options_.kueue && c.kueue_target && !options_.dry_run)
    GateScaleDowns(*c.kueue_target, &c.to_apply, &c.ladder_held);
  // Drift mode, cleanupOnly and change windows.
  c.gates = GatePlan(*c.repo, ChangedTargets(signatures_, c.signatures), c.rev, &c.to_apply, &c.eligible, c.now);
}

// 5. Apply, then re-list what we touched so the next partial re-plan and the
// chip gauges see our own changes. A failure leaves the projects stale, which
// the next reconcile of their targets re-lists.
void Reconciler::ApplyEligible(Cycle& c) {
  if (!options_.dry_run && !c.to_apply.targets.empty()) {
    if (options_.nodes) CordonBeforeTeardown(c);
    for (const auto& t : c.to_apply.targets)
      Emit("apply.started", t.key, c.rev.id,
           "tpu-provisioner: applying " + std::to_string(t.actions.size()) + " actions to " + t.key + " at " +
               c.rev.id.substr(0, 12),
           {{"actions", t.actions.size()}});
    c.applied = cancelled_ ? apply::ApplyReport{} : cloud_->Apply(c.to_apply, c.running);
    TallyOutcomes(c);
    if (options_.nodes) ReportApplyToNodes(c);
    EmitOutcomes(c);
    c.report.applied = c.applied.applied;
    c.report.failed = c.applied.failed;
    c.report.waiting_for_capacity = c.applied.waiting_for_capacity;
    c.interrupted = cancelled_.load();
    std::set<std::string> touched;
    for (const auto& key : c.eligible) touched.insert(ProjectOf(key));
    if (!cancelled_) RefreshProjects({touched.begin(), touched.end()}, nullptr);
    else stale_projects_.insert(touched.begin(), touched.end());
  }
  if (options_.demand) {
    if (options_.dry_run) c.to_apply.targets.clear();
    options_.demand->AfterApply(c.to_apply, c.applied);
  }
  if (!c.plan_options.ladder_moves.empty())
    ladder_.Record(c.plan_options.ladder_moves, c.to_apply, c.applied, c.ladder_held, c.now);
  if (!options_.dry_run && !c.eligible.empty()) {
    std::vector<const manifest::Target*> applied;
    for (const auto& key : c.eligible)
      if (auto t = c.declared.find(key); t != c.declared.end()) applied.push_back(t->second);
    ladder_.Observe(applied, live_, clock_->Now());
  }
}

// The apply's tasks, counted per target.
void Reconciler::TallyOutcomes(Cycle& c) {
  std::map<std::string, std::string> target_of;  // task id (resource id) → target key
  for (const auto& t : c.to_apply.targets)
    for (const auto& a : t.actions)
      // A move back up a capacity ladder is a try: its outcome is the slice's
      // (ladder_moves.h), never a failure of the target.
      if (!a.ladder_move) target_of[a.resource.Id()] = t.key;
  for (const auto& task : c.applied.tasks) {
    auto it = target_of.find(task.id);
    if (it == target_of.end()) continue;  // an await of an earlier run's operation
    ApplyOutcome& o = c.outcomes[it->second];
    switch (task.state) {
      case apply::TaskResult::State::kDone: ++o.done; break;
      case apply::TaskResult::State::kWaitingForCapacity: ++o.waiting; break;
      case apply::TaskResult::State::kSkipped: ++o.skipped; break;
      case apply::TaskResult::State::kFailed:
        ++o.failed;
        if (o.first_error.empty()) o.first_error = task.description + ": " + task.status.ToString();
        break;
      default: ++o.cancelled; break;  // pending, running or cancelled when the run ended
    }
  }
  // A cancelled run may end before scheduling some targets at all. (A target
  // whose only actions were ladder moves has no outcome of its own.)
  std::set<std::string> with_actions;
  for (const auto& [id, key] : target_of) with_actions.insert(key);
  for (const auto& key : c.eligible)
    if (!c.outcomes.count(key) && with_actions.count(key)) ++c.outcomes[key].cancelled;
}

void Reconciler::EmitOutcomes(const Cycle& c) {
  for (const auto& [key, o] : c.outcomes) {
    nlohmann::json counts = {{"applied", o.done}, {"failed", o.failed}, {"waitingForCapacity", o.waiting},
                             {"skipped", o.skipped}, {"cancelled", o.cancelled}};
    if (o.failed)
      Emit("apply.failed", key, c.rev.id, "tpu-provisioner: apply to " + key + " failed: " + o.first_error,
           counts);
    else if (o.waiting)
      Emit("stockout", key, c.rev.id,
           "tpu-provisioner: " + std::to_string(o.waiting) + " actions in " + key +
               " wait for capacity (stockout); retried on the capacity backoff",
           counts);
    else if (!o.cancelled)
      Emit("apply.finished", key, c.rev.id, "tpu-provisioner: applied " + std::to_string(o.done) + " actions to " + key,
           counts);
  }
}

// 6. Report, per planned target.
void Reconciler::ReportTargets(Cycle& c) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [kind, n] : c.report.actions) status_.planned_actions[kind] += n;
  status_.applied_actions["applied"] += c.report.applied;
  status_.applied_actions["failed"] += c.report.failed;
  status_.applied_actions["waiting-for-capacity"] += c.report.waiting_for_capacity;
  std::set<std::string> seen;
  for (const auto& t : c.plan.targets) {
    seen.insert(t.key);
    ReportPlanned(t, c);
  }
  // Blocked targets the planner left out, and targets gone for good.
  for (const auto& t : c.repo->targets) {
    if (seen.count(t.Key()) || !t.blocked() || (!c.full && !c.selected.count(t.Key()))) continue;
    if (!Owns(t.Key())) continue;
    TargetReport& r = reports_[t.Key()];
    r.key = t.Key();
    r.revision = c.rev.id;
    r.state = TargetState::kBlocked;
    r.errors.clear();
    for (const auto& e : t.errors) r.errors.push_back(e.ToString());
    r.declared_chips = DeclaredChips(t);
    seen.insert(t.Key());
  }
  for (auto it = reports_.begin(); it != reports_.end();) {
    bool considered = c.full || c.selected.count(it->first);
    const bool gone = considered && !seen.count(it->first) && !c.declared.count(it->first);
    // A target whose shard moved to another replica is that replica's to report.
    if (gone || !Owns(it->first)) {
      backoff_.Forget(it->first);
      it = reports_.erase(it);
    } else {
      auto d = c.declared.find(it->first);
      it->second.live_chips = LiveChips(live_, it->first, d == c.declared.end() ? nullptr : d->second);
      ++it;
    }
  }
  ReportGates(c.plan, c.gates, c.eligible, *c.repo);
  if (c.refresh_failed.empty()) status_.last_error.clear();
  if (!c.interrupted) {
    status_.last_applied_revision = c.rev.id;
    status_.ready = true;
  }
}

void Reconciler::ReportPlanned(const plan::TargetPlan& t, Cycle& c) {
  TargetReport& r = reports_[t.key];
  r.key = t.key;
  r.revision = c.rev.id;
  r.vanished = t.vanished;
  SummarizePlan(t, &r);
  r.reservations = t.reservations;
  auto d = c.declared.find(t.key);
  r.declared_chips = d == c.declared.end() ? 0 : DeclaredChips(*d->second);
  switch (t.status) {
    case plan::TargetStatus::kBlocked:
    case plan::TargetStatus::kRefused: {
      const TargetState was = r.state;
      r.state = t.status == plan::TargetStatus::kBlocked ? TargetState::kBlocked : TargetState::kRefused;
      if (was != r.state || r.errors != t.errors)
        Emit("target.blocked", t.key, c.rev.id,
             "tpu-provisioner: " + t.key + " is " + TargetStateName(r.state) + ": " +
                 (t.errors.empty() ? std::string("see /status") : t.errors.front()),
             {{"state", TargetStateName(r.state)}, {"errors", t.errors}});
      r.errors = t.errors;
      backoff_.Forget(t.key);
      interrupted_.erase(t.key);
      return;
    }
    case plan::TargetStatus::kSuspended:
      r.state = TargetState::kSuspended;
      r.errors.clear();
      backoff_.Forget(t.key);
      interrupted_.erase(t.key);
      return;
    case plan::TargetStatus::kPlanned:
      ReportApplied(r, c);
      return;
  }
}

// A planned target's state after the apply.
void Reconciler::ReportApplied(TargetReport& r, Cycle& c) {
  const bool has_changes = r.last_plan.create + r.last_plan.update + r.last_plan.replace + r.last_plan.remove > 0;
  if (has_changes && !options_.dry_run) {
    if (!c.eligible.count(r.key)) return;  // backing off: its state and error stay as they were
    const ApplyOutcome& o = c.outcomes[r.key];
    if (o.failed > 0) {
      RecordFailure(r, o.first_error, c.now, false);
      interrupted_.erase(r.key);
      return;
    }
    if (auto h = held_.find(r.key); h != held_.end()) {
      // Whatever else ran, the held removals are still to do.
      r.state = TargetState::kWaitingForWorkloads;
      r.errors = {h->second.message};
      interrupted_.erase(r.key);
      return;
    }
    if (o.cancelled > 0) {
      r.state = TargetState::kInterrupted;
      interrupted_.insert(r.key);
      return;
    }
    if (o.waiting > 0) {
      RecordFailure(r, "waiting for capacity (stockout)", c.now, true);
      interrupted_.erase(r.key);
      return;
    }
  }
  r.state = has_changes && options_.dry_run ? TargetState::kPending : TargetState::kInSync;
  backoff_.Succeeded(r.key);
  interrupted_.erase(r.key);
  r.consecutive_failures = 0;
  r.errors.clear();
  r.last_error.clear();
}

// 7. Remember what was reconciled, sync Kueue, close the report.
void Reconciler::EndCycle(Cycle& c) {
  if (c.rev.is_commit && !c.held()) NoteApplied(c.rev.id, c.report);
  signatures_ = std::move(c.signatures);
  initialized_ = true;
  if (options_.kueue) {
    const bool planned = c.kueue_target && std::find(c.report.planned_targets.begin(), c.report.planned_targets.end(),
                                                     c.kueue_target->Key()) != c.report.planned_targets.end();
    MaybeSyncKueue(c.kueue_target, planned, c.now, c.report);
    std::lock_guard<std::mutex> lock(mu_);
    status_.kueue.scale_down_waits.clear();
    for (const auto& [key, wait] : held_) status_.kueue.scale_down_waits.push_back(wait);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_.ladder = ladder_.Snapshot(c.now);
  }
  FinishCycle(c.report, c.start);
}

}  // namespace tpu::daemon
