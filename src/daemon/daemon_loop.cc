// DaemonLoop: see daemon_loop.h.
#include "daemon/daemon_loop.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "daemon/reconcile_line.h"

namespace tpu::daemon {
namespace {

// The shortest sleep between reconciles, whatever the deadlines say: a
// safety floor so a bug in a deadline can never become a busy loop.
constexpr auto kMinSleep = std::chrono::milliseconds(200);

}  // namespace

DaemonLoop::DaemonLoop(Reconciler* reconciler, source::RevisionSource* source, Waiter* waiter,
                       const Clock* clock, LoopOptions options)
    : reconciler_(reconciler), source_(source), waiter_(waiter), clock_(clock),
      options_(std::move(options)) {}

void DaemonLoop::RequestStop() {
  stop_ = true;
  reconciler_->Cancel();
  waiter_->Wake();
}

void DaemonLoop::RequestFetch() {
  fetch_ = true;
  waiter_->Wake();
}

void DaemonLoop::RequestReload() {
  reload_ = true;
  waiter_->Wake();
}

void DaemonLoop::RequestWake() { waiter_->Wake(); }

void DaemonLoop::RequestFullPass() {
  full_ = true;
  waiter_->Wake();
}

std::map<std::string, uint64_t> DaemonLoop::FetchCounts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fetches_;
}

void DaemonLoop::Run() {
  TimePoint next_poll = clock_->Now();
  bool rescan = false;
  while (!stop_) {
    TimePoint now = clock_->Now();
    if (source_->remote() && (fetch_.exchange(false) || now >= next_poll)) {
      Status s = source_->Fetch();
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++fetches_[s.ok() ? "ok" : "error"];
      }
      if (!s.ok()) spdlog::warn("fetch {}: {}", source_->Describe(), s.ToString());
      next_poll = clock_->Now() + options_.poll_interval;
    }
    if (options_.may_act && !options_.may_act()) {
      // A follower: fetching keeps the clone warm; reconciling is the leader's.
      auto woke = waiter_->Wait(clock_->Now() + options_.standby_recheck);
      if (woke.ok() && woke->rescan) rescan = true;
      continue;
    }
    bool full = rescan || full_.exchange(false);
    rescan = false;
    if (reload_.exchange(false)) {
      spdlog::info("reload: re-reading configuration; next reconcile is a drift check");
      if (options_.on_reload) options_.on_reload();
      reconciler_->AcceptHistoryRewrite();
      full = true;
    }
    if (stop_) break;
    CycleReport report = reconciler_->RunOnce(full);
    for (const auto& w : report.warnings) spdlog::warn("{}", w);
    if (report.ran) {
      if (report.error.ok() && report.failed == 0) spdlog::info("{}", ReconcileLine(report));
      else spdlog::warn("{}", ReconcileLine(report));
    }
    if (stop_) break;

    now = clock_->Now();
    TimePoint deadline = reconciler_->NextDue();
    if (source_->remote()) deadline = std::min(deadline, next_poll);
    deadline = std::max(deadline, now + kMinSleep);
    auto woke = waiter_->Wait(deadline);
    if (!woke.ok()) {
      // A directory that could not be watched: inotify goes on without it,
      // and the drift check covers what it would have seen.
      spdlog::warn("watch: {}", woke.status().ToString());
      continue;
    }
    rescan = woke->rescan;
  }
  spdlog::info("stopping: no new work taken; operations in flight are left to the next run");
}

}  // namespace tpu::daemon
