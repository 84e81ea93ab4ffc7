// Reconciler: see reconciler.h. The order inside RunOnce is the contract:
// read → history check → load → choose targets → refresh → plan → apply →
// refresh what we changed → report.
#include "daemon/reconciler.h"

#include <algorithm>

#include "daemon/target_report.h"
#include "plan/planner.h"

namespace tpu::daemon {
namespace {

// Upper bounds (seconds) of the reconcile-duration histogram's buckets.
const double kDurationBuckets[] = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600};

std::string ProjectOf(const std::string& key) { return key.substr(0, key.find('/')); }

}  // namespace

Reconciler::Reconciler(RevisionSource* source, CloudPort* cloud, const Clock* clock,
                       ReconcilerOptions options)
    : source_(source), cloud_(cloud), clock_(clock), options_(std::move(options)),
      backoff_(options_.backoff) {
  status_.source = source_->Describe();
  status_.dry_run = options_.dry_run;
  for (double b : kDurationBuckets) status_.duration_buckets.push_back({b, 0});
}

TimePoint Reconciler::NextDue() const {
  if (force_full_next_) return clock_->Now();
  if (!initialized_) return std::max(clock_->Now(), source_retry_at_);
  TimePoint due = next_drift_;
  if (auto retry = backoff_.NextRetry()) due = std::min(due, *retry);
  if (options_.demand) due = std::min(due, options_.demand->NextDue());
  if (options_.kueue) due = std::min(due, next_kueue_sync_);
  if (next_window_) due = std::min(due, *next_window_);
  return due;
}

void Reconciler::LoadApplied(CycleReport& report) {
  if (applied_loaded_) return;
  applied_loaded_ = true;
  auto kept = source_->LoadApplied();
  if (!kept.ok()) {
    report.warnings.push_back("cannot read the last reconciled commit (" + std::string(kAppliedRef) +
                              "): " + kept.status().ToString() + "; a force-push made while stopped goes unseen");
    return;
  }
  applied_stored_ = *kept;
  if (applied_commit_.empty()) applied_commit_ = *kept;
}

void Reconciler::NoteApplied(const std::string& commit, CycleReport& report) {
  applied_commit_ = commit;
  if (options_.dry_run || commit == applied_stored_) return;
  if (Status s = source_->StoreApplied(commit); !s.ok()) {
    report.warnings.push_back("cannot record the reconciled commit: " + s.ToString());
    return;
  }
  applied_stored_ = commit;
}

void Reconciler::AcceptHistoryRewrite() {
  rewrite_accepted_ = rewrite_seen_;
  force_full_next_ = true;
}

void Reconciler::Cancel() {
  cancelled_ = true;
  cloud_->CancelApply();
}

DaemonStatus Reconciler::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  DaemonStatus s = status_;
  const TimePoint now = clock_->Now();
  for (const auto& [key, r] : reports_) {
    TargetReport copy = r;
    if (auto at = backoff_.RetryAt(key); at && *at > now)
      copy.retry_in_seconds = std::chrono::duration<double>(*at - now).count();
    if (copy.drift_since)
      copy.drift_seconds = std::chrono::duration<double>(clock_->WallNow().time_since_epoch()).count() -
                           static_cast<double>(copy.drift_since);
    s.targets.push_back(std::move(copy));
  }
  return s;
}

std::map<std::string, Status> Reconciler::RefreshProjects(const std::vector<std::string>& projects,
                                                          std::vector<cloud::Operation>* running) {
  std::map<std::string, Status> failed;
  if (projects.empty()) return failed;
  auto take = [&](cloud::LiveState live, const std::vector<std::string>& which) {
    for (const auto& p : which) {
      auto it = live.projects.find(p);
      cloud::ProjectState state;
      state.project = p;
      if (it != live.projects.end()) state = std::move(it->second);
      if (running)
        running->insert(running->end(), state.running_operations.begin(), state.running_operations.end());
      live_.projects[p] = std::move(state);
      stale_projects_.erase(p);
      known_projects_.insert(p);
    }
  };
  auto count = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    ++status_.refreshes;
  };
  auto all = cloud_->Refresh(projects);
  count();
  if (all.ok()) {
    take(std::move(all.value()), projects);
    return failed;
  }
  if (projects.size() == 1) {
    failed[projects[0]] = all.status();
    stale_projects_.insert(projects[0]);
    return failed;
  }
  // One project's failure (a permission, an outage) must not stop the others:
  // list them one by one to find out whose it is.
  for (const auto& p : projects) {
    auto one = cloud_->Refresh({p});
    count();
    if (one.ok()) {
      take(std::move(one.value()), {p});
    } else {
      failed[p] = one.status();
      stale_projects_.insert(p);
    }
  }
  return failed;
}

void Reconciler::RecordFailure(TargetReport& r, const std::string& error, TimePoint now,
                               bool capacity) {
  backoff_.Failed(r.key, now, capacity);
  r.consecutive_failures = backoff_.failures(r.key);
  r.state = capacity ? TargetState::kWaitingForCapacity : TargetState::kFailed;
  // The first error of a run of failures is kept: later ones are often its echo.
  if (r.last_error.empty()) r.last_error = error;
  r.errors = {error};
}

void Reconciler::FinishCycle(CycleReport& report, TimePoint start) {
  report.duration =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_->Now() - start);
  std::lock_guard<std::mutex> lock(mu_);
  status_.files_parsed = cache_.parses();
  status_.files_parsed_last = cache_.last_load_parses();
  if (!report.ran) return;
  ++status_.reconciles;
  if (!report.error.ok()) ++status_.reconcile_errors;
  const double seconds = std::chrono::duration<double>(report.duration).count();
  status_.last_reconcile_seconds = seconds;
  status_.duration_sum += seconds;
  ++status_.duration_count;
  for (auto& [le, n] : status_.duration_buckets)
    if (seconds <= le) ++n;
}

CycleReport Reconciler::RunOnce(bool force_full) {
  const TimePoint start = clock_->Now();
  const TimePoint now = start;
  CycleReport report;
  if (cancelled_) return report;
  auto fail = [&](const Status& s) {
    report.ran = true;
    report.error = s;
    // Before a first reconcile NextDue() would say "now" forever: retry on
    // the backoff's first delay instead (inotify, a poll or a webhook may
    // wake the loop sooner).
    if (!initialized_) source_retry_at_ = now + options_.backoff.initial;
    {
      std::lock_guard<std::mutex> lock(mu_);
      status_.last_error = s.ToString();
    }
    FinishCycle(report, start);
    return report;
  };

  // 1. The revision, checked against the last reconciled commit.
  auto current = source_->Current();
  if (!current.ok()) return fail(current.status());
  Revision rev = std::move(current.value());
  if (rev.is_commit) LoadApplied(report);
  std::optional<HistoryRewrite> rewrite;
  if (rev.is_commit && !applied_commit_.empty() && rev.id != applied_commit_) {
    auto descends = source_->DescendsFrom(rev.id, applied_commit_);
    if (!descends.ok() || !*descends) {
      rewrite = HistoryRewrite{applied_commit_, rev.id, false};
      if (rewrite_seen_ != rev.id) {
        rewrite_seen_ = rev.id;
        report.warnings.push_back("history rewrite: " + rev.id + " does not descend from " +
                                  applied_commit_ + " (force-push?)" +
                                  (options_.refuse_history_rewrite ? "; holding " + applied_commit_ : ""));
        Emit("history.rewrite", "", rev.id, report.warnings.back(),
             {{"from", applied_commit_}, {"to", rev.id}, {"held", options_.refuse_history_rewrite}});
        std::lock_guard<std::mutex> lock(mu_);
        ++status_.history_rewrites;
      }
      if (options_.refuse_history_rewrite && rewrite_accepted_ != rev.id) {
        rewrite->held = true;
        auto held = source_->AtCommit(applied_commit_);
        if (!held.ok()) return fail(held.status());
        rev = std::move(held.value());
      }
    }
  }
  if (rewrite) {
    std::lock_guard<std::mutex> lock(mu_);
    status_.history_rewrite = rewrite;
  }
  report.revision = rev.id;

  // 2. Load and see what changed. Targets whose directory listing is as it was
  // are carried over from the previous load and changed files come from the
  // parse cache, so a one-file commit rebuilds one target; the signatures
  // reuse the load's listings.
  const manifest::Repo& repo = manifest::LoadRepoIncremental(*rev.tree, options_.load, &cache_);
  report.files_parsed = cache_.last_load_parses();
  TreeSignatures signatures = ComputeSignatures(*rev.tree, cache_);
  std::map<std::string, const manifest::Target*> declared;
  for (const auto& t : repo.targets) declared[t.Key()] = &t;
  // Copied before demand-driven pools join: quota follows what git declares.
  const std::optional<manifest::Target> kueue_target =
      options_.kueue ? KueueTarget(repo) : std::nullopt;

  const bool full = force_full || force_full_next_ || !initialized_ || now >= next_drift_;
  std::set<std::string> selected;
  // Asked every pass (the hook forgets what it reported); a drift check
  // plans every target anyway.
  const std::set<std::string> demand_due =
      options_.demand ? options_.demand->TargetsDue(now) : std::set<std::string>{};
  if (!full) {
    selected = ChangedTargets(signatures_, signatures);
    selected.insert(demand_due.begin(), demand_due.end());
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, r] : reports_)
      if (backoff_.RetryDue(key, now)) selected.insert(key);
    selected.insert(interrupted_.begin(), interrupted_.end());
    // Held scale-downs are asked again on every pass (the resync interval
    // makes one at least that often).
    for (const auto& [key, wait] : held_) selected.insert(key);
    // So are targets a change window held: it may have opened.
    selected.insert(window_held_.begin(), window_held_.end());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_.revision = rev.id;
    status_.repo_errors.clear();
    for (const auto& e : repo.errors) status_.repo_errors.push_back(e.ToString());
  }
  if (!full && selected.empty()) {
    // Nothing of deploy/ changed: this revision is reconciled as it stands.
    signatures_ = std::move(signatures);
    if (rev.is_commit && !(rewrite && rewrite->held)) NoteApplied(rev.id, report);
    if (options_.kueue) MaybeSyncKueue(kueue_target, false, now, report);
    FinishCycle(report, start);
    return report;
  }
  report.ran = true;
  report.full = full;
  force_full_next_ = false;

  // 3. Live state: every project on a drift check; otherwise only projects
  // never listed or changed by us since their last listing.
  plan::PlanOptions plan_options;
  plan_options.allow_mass_delete = options_.allow_mass_delete;
  plan_options.tool_version = options_.tool_version;
  plan_options.fingerprint_live = false;  // plans are applied here, never saved
  if (!full) plan_options.only_targets.assign(selected.begin(), selected.end());
  std::set<std::string> projects;
  for (const auto& p : plan::ProjectsToRefresh(repo, plan_options)) projects.insert(p);
  if (full) {
    projects.insert(known_projects_.begin(), known_projects_.end());
  } else {
    for (auto it = projects.begin(); it != projects.end();) {
      bool retry = false;
      for (const auto& key : selected)
        if (ProjectOf(key) == *it && backoff_.failures(key) > 0) retry = true;
      // Demand decisions read pool states and running operations: always fresh.
      for (const auto& key : demand_due)
        if (ProjectOf(key) == *it) retry = true;
      if (live_.projects.count(*it) && !stale_projects_.count(*it) && !retry) it = projects.erase(it);
      else ++it;
    }
  }
  std::vector<cloud::Operation> running;
  const std::map<std::string, Status> refresh_failed =
      RefreshProjects({projects.begin(), projects.end()}, &running);
  if (!refresh_failed.empty()) {
    // Targets of projects that could not be listed fail (and back off); the
    // rest are planned as usual.
    std::set<std::string> keys = selected;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (full) {
        for (const auto& t : repo.targets) keys.insert(t.Key());
        for (const auto& [key, r] : reports_) keys.insert(key);
      }
      for (const auto& key : keys) {
        auto f = refresh_failed.find(ProjectOf(key));
        if (f == refresh_failed.end()) continue;
        TargetReport& r = reports_[key];
        r.key = key;
        r.revision = rev.id;
        RecordFailure(r, f->second.ToString(), now, false);
      }
      status_.last_error = refresh_failed.begin()->second.ToString();
    }
    report.error = refresh_failed.begin()->second;
    std::vector<std::string> keep;
    for (const auto& key : keys)
      if (!refresh_failed.count(ProjectOf(key))) keep.push_back(key);
    if (keep.empty()) {
      if (full) next_drift_ = backoff_.NextRetry().value_or(now + options_.drift_interval);
      initialized_ = true;
      signatures_ = std::move(signatures);
      FinishCycle(report, start);
      return report;
    }
    plan_options.only_targets = keep;
  }
  if (full) next_drift_ = now + options_.drift_interval;

  // 4. Plan, then keep for apply the executable targets with changes that are
  // not backing off (a changed target is tried at once: it may be the fix).
  if (options_.demand) options_.demand->SetRevision(repo);
  plan::Plan plan = plan::ComputePlan(repo, live_, plan_options);
  if (options_.demand) {
    // Workload-owned pools: actions of their own, outside git's diff and guards.
    for (auto& tp : plan.targets) {
      if (!tp.executable() || (!full && !selected.count(tp.key))) continue;
      auto t = std::find_if(repo.targets.begin(), repo.targets.end(),
                            [&](const manifest::Target& m) { return m.Key() == tp.key; });
      if (t == repo.targets.end() || t->blocked()) continue;
      for (auto& a : options_.demand->ExtraActions(*t, live_)) tp.actions.push_back(std::move(a));
    }
  }
  const std::set<std::string> changed = full ? ChangedTargets(signatures_, signatures) : selected;
  plan::Plan to_apply = plan;
  to_apply.targets.clear();
  std::set<std::string> eligible;
  for (const auto& t : plan.targets) {
    report.planned_targets.push_back(t.key);
    if (!t.executable()) {
      if (t.status == plan::TargetStatus::kBlocked || t.status == plan::TargetStatus::kRefused)
        ++report.blocked;
      continue;
    }
    bool has_changes = false;
    for (const auto& a : t.actions)
      if (a.changes_something()) {
        has_changes = true;
        ++report.actions[plan::ActionKindName(a.kind)];
      }
    if (!has_changes) continue;
    if (!backoff_.Ready(t.key, now) && !changed.count(t.key) && !interrupted_.count(t.key)) continue;
    eligible.insert(t.key);
    to_apply.targets.push_back(t);
  }

  // The scale-down gate: deletes and shrinks of the Kueue target's pools wait
  // while admitted workloads need their chips; the rest of the plan goes on.
  if (options_.kueue && kueue_target && !options_.dry_run) GateScaleDowns(*kueue_target, &to_apply);
  // Drift mode, cleanupOnly and change windows.
  const std::map<std::string, GateDecision> gates =
      GatePlan(repo, ChangedTargets(signatures_, signatures), rev, &to_apply, &eligible, now);

  // 5. Apply.
  std::map<std::string, ApplyOutcome> outcomes;
  bool interrupted = false;
  apply::ApplyReport applied;
  if (!options_.dry_run && !to_apply.targets.empty()) {
    std::map<std::string, std::string> target_of;  // task id (resource id) → target key
    for (const auto& t : to_apply.targets)
      for (const auto& a : t.actions) target_of[a.resource.Id()] = t.key;
    for (const auto& t : to_apply.targets)
      Emit("apply.started", t.key, rev.id,
           "tpu-provisioner: applying " + std::to_string(t.actions.size()) + " actions to " + t.key + " at " +
               rev.id.substr(0, 12),
           {{"actions", t.actions.size()}});
    applied = cancelled_ ? apply::ApplyReport{} : cloud_->Apply(to_apply, running);
    for (const auto& task : applied.tasks) {
      auto it = target_of.find(task.id);
      if (it == target_of.end()) continue;  // an await of an earlier run's operation
      ApplyOutcome& o = outcomes[it->second];
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
    // A cancelled run may end before scheduling some targets at all.
    for (const auto& key : eligible)
      if (!outcomes.count(key)) ++outcomes[key].cancelled;
    for (const auto& [key, o] : outcomes) {
      nlohmann::json counts = {{"applied", o.done}, {"failed", o.failed}, {"waitingForCapacity", o.waiting},
                               {"skipped", o.skipped}, {"cancelled", o.cancelled}};
      if (o.failed)
        Emit("apply.failed", key, rev.id, "tpu-provisioner: apply to " + key + " failed: " + o.first_error,
             counts);
      else if (o.waiting)
        Emit("stockout", key, rev.id,
             "tpu-provisioner: " + std::to_string(o.waiting) + " actions in " + key +
                 " wait for capacity (stockout); retried on the capacity backoff",
             counts);
      else if (!o.cancelled)
        Emit("apply.finished", key, rev.id,
             "tpu-provisioner: applied " + std::to_string(o.done) + " actions to " + key, counts);
    }
    report.applied = applied.applied;
    report.failed = applied.failed;
    report.waiting_for_capacity = applied.waiting_for_capacity;
    interrupted = cancelled_.load();
    // Live state of what we touched, so the next partial re-plan and the chip
    // gauges see our own changes. A failure leaves the projects stale, which
    // the next reconcile of their targets re-lists.
    std::set<std::string> touched;
    for (const auto& key : eligible) touched.insert(ProjectOf(key));
    if (!cancelled_) RefreshProjects({touched.begin(), touched.end()}, nullptr);
    else stale_projects_.insert(touched.begin(), touched.end());
  }

  if (options_.demand) {
    if (options_.dry_run) to_apply.targets.clear();
    options_.demand->AfterApply(to_apply, applied);
  }

  // 6. Report, per planned target.
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [kind, n] : report.actions) status_.planned_actions[kind] += n;
    status_.applied_actions["applied"] += report.applied;
    status_.applied_actions["failed"] += report.failed;
    status_.applied_actions["waiting-for-capacity"] += report.waiting_for_capacity;
    std::set<std::string> seen;
    for (const auto& t : plan.targets) {
      seen.insert(t.key);
      TargetReport& r = reports_[t.key];
      r.key = t.key;
      r.revision = rev.id;
      r.vanished = t.vanished;
      SummarizePlan(t, &r);
      auto d = declared.find(t.key);
      const manifest::Target* target = d == declared.end() ? nullptr : d->second;
      r.declared_chips = target ? DeclaredChips(*target) : 0;
      switch (t.status) {
        case plan::TargetStatus::kBlocked:
        case plan::TargetStatus::kRefused: {
          const TargetState was = r.state;
          r.state = t.status == plan::TargetStatus::kBlocked ? TargetState::kBlocked : TargetState::kRefused;
          if (was != r.state || r.errors != t.errors)
            Emit("target.blocked", t.key, rev.id,
                 "tpu-provisioner: " + t.key + " is " + TargetStateName(r.state) + ": " +
                     (t.errors.empty() ? std::string("see /status") : t.errors.front()),
                 {{"state", TargetStateName(r.state)}, {"errors", t.errors}});
          r.errors = t.errors;
          backoff_.Forget(t.key);
          interrupted_.erase(t.key);
          break;
        }
        case plan::TargetStatus::kSuspended:
          r.state = TargetState::kSuspended;
          r.errors.clear();
          backoff_.Forget(t.key);
          interrupted_.erase(t.key);
          break;
        case plan::TargetStatus::kPlanned: {
          bool has_changes = r.last_plan.create + r.last_plan.update + r.last_plan.replace +
                                 r.last_plan.remove > 0;
          if (!has_changes) {
            r.state = TargetState::kInSync;
          } else if (options_.dry_run) {
            r.state = TargetState::kPending;
          } else if (!eligible.count(t.key)) {
            break;  // backing off: its state and error stay as they were
          } else {
            const ApplyOutcome& o = outcomes[t.key];
            if (o.failed > 0) {
              RecordFailure(r, o.first_error, now, false);
              interrupted_.erase(t.key);
              break;
            }
            if (auto h = held_.find(t.key); h != held_.end()) {
              // Whatever else ran, the held removals are still to do.
              r.state = TargetState::kWaitingForWorkloads;
              r.errors = {h->second.message};
              interrupted_.erase(t.key);
              break;
            }
            if (o.cancelled > 0) {
              r.state = TargetState::kInterrupted;
              interrupted_.insert(t.key);
              break;
            }
            if (o.waiting > 0) {
              RecordFailure(r, "waiting for capacity (stockout)", now, true);
              interrupted_.erase(t.key);
              break;
            }
            r.state = TargetState::kInSync;
          }
          backoff_.Succeeded(t.key);
          interrupted_.erase(t.key);
          r.consecutive_failures = 0;
          r.errors.clear();
          r.last_error.clear();
          break;
        }
      }
    }
    // Blocked targets the planner left out, and targets gone for good.
    for (const auto& t : repo.targets) {
      if (seen.count(t.Key()) || !t.blocked() || (!full && !selected.count(t.Key()))) continue;
      TargetReport& r = reports_[t.Key()];
      r.key = t.Key();
      r.revision = rev.id;
      r.state = TargetState::kBlocked;
      r.errors.clear();
      for (const auto& e : t.errors) r.errors.push_back(e.ToString());
      r.declared_chips = DeclaredChips(t);
      seen.insert(t.Key());
    }
    for (auto it = reports_.begin(); it != reports_.end();) {
      bool considered = full || selected.count(it->first);
      if (considered && !seen.count(it->first) && !declared.count(it->first)) {
        backoff_.Forget(it->first);
        it = reports_.erase(it);
      } else {
        auto d = declared.find(it->first);
        it->second.live_chips = LiveChips(live_, it->first, d == declared.end() ? nullptr : d->second);
        ++it;
      }
    }
    ReportGates(plan, gates, eligible, repo);
    if (refresh_failed.empty()) status_.last_error.clear();
    if (!interrupted) {
      status_.last_applied_revision = rev.id;
      status_.ready = true;
    }
  }
  if (rev.is_commit && !(rewrite && rewrite->held)) NoteApplied(rev.id, report);
  signatures_ = std::move(signatures);
  initialized_ = true;
  if (options_.kueue) {
    const bool planned = kueue_target && std::find(report.planned_targets.begin(), report.planned_targets.end(),
                                                   kueue_target->Key()) != report.planned_targets.end();
    MaybeSyncKueue(kueue_target, planned, now, report);
    std::lock_guard<std::mutex> lock(mu_);
    status_.kueue.scale_down_waits.clear();
    for (const auto& [key, wait] : held_) status_.kueue.scale_down_waits.push_back(wait);
  }
  FinishCycle(report, start);
  return report;
}

}  // namespace tpu::daemon
