// Reconciler: see reconciler.h. The order of RunOnce's steps is the contract:
// read → history check → load → choose targets → refresh → plan → apply →
// refresh what we changed → report. The steps are in reconciler_cycle.cc.
#include "daemon/reconciler.h"

#include <algorithm>

#include "daemon/target_report.h"
#include "plan/planner.h"

namespace tpu::daemon {
namespace {

// Upper bounds (seconds) of the reconcile-duration histogram's buckets.
const double kDurationBuckets[] = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600};

}  // namespace

Reconciler::Reconciler(source::RevisionSource* source, CloudPort* cloud, const Clock* clock,
                       ReconcilerOptions options)
    : source_(source), cloud_(cloud), clock_(clock), options_(std::move(options)),
      backoff_(options_.backoff), ladder_(options_.ladder_retry) {
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
  if (auto ladder = ladder_.NextDue()) due = std::min(due, *ladder);
  return due;
}

void Reconciler::LoadApplied(CycleReport& report) {
  if (applied_loaded_) return;
  applied_loaded_ = true;
  auto kept = source_->LoadApplied();
  if (!kept.ok()) {
    report.warnings.push_back("cannot read the last reconciled commit (" + std::string(source::kAppliedRef) +
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
  Cycle c;
  c.start = c.now = clock_->Now();
  if (cancelled_) return c.report;
  if (!ReadRevision(c) || !LoadAndSelect(c, force_full) || !RefreshSelected(c)) return c.report;
  PlanSelected(c);
  ApplyEligible(c);
  ReportTargets(c);
  EndCycle(c);
  return c.report;
}

}  // namespace tpu::daemon
