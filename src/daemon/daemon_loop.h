// DaemonLoop: the `watch` main loop. Sleeps in a Waiter (inotify, wake-ups,
// deadlines) and on each wake-up fetches when due (remote sources: every
// poll_interval, or at once after a webhook), then runs one reconcile, and
// logs it. Stop, fetch and reload requests come from other threads (signals,
// HTTP) as flags plus a Wake(); the work happens on the loop's thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "daemon/clock.h"
#include "daemon/reconciler.h"
#include "source/revision_source.h"
#include "daemon/waiter.h"

namespace tpu::daemon {

struct LoopOptions {
  std::chrono::milliseconds poll_interval{std::chrono::seconds(60)};  // remote sources only
  // Run on the loop's thread after SIGHUP, before the forced drift check
  // (re-reads the webhook secret); may be empty.
  std::function<void()> on_reload;
  // Whether this replica may act now (leader election); empty: always. While
  // it may not, no reconcile runs: the loop only sleeps, `standby_recheck`
  // at a time, until woken.
  std::function<bool()> may_act;
  std::chrono::milliseconds standby_recheck{std::chrono::seconds(1)};
};

class DaemonLoop {
 public:
  // Every pointer must outlive the loop.
  DaemonLoop(Reconciler* reconciler, source::RevisionSource* source, Waiter* waiter, const Clock* clock,
             LoopOptions options);

  // Runs until RequestStop(). Returns once no reconcile is running.
  void Run();

  // Any thread. Stop also cancels the apply in progress (operations already
  // started are left for the next run to find).
  void RequestStop();
  void RequestFetch();
  void RequestReload();
  // Runs a reconcile soon (demand_hook.h, Kubernetes watches): the pass asks
  // its hooks what is due.
  void RequestWake();
  // The next reconcile is a drift check over every target (leadership gained).
  void RequestFullPass();

  std::map<std::string, uint64_t> FetchCounts() const;

 private:
  Reconciler* reconciler_;
  source::RevisionSource* source_;
  Waiter* waiter_;
  const Clock* clock_;
  LoopOptions options_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> fetch_{false};
  std::atomic<bool> reload_{false};
  std::atomic<bool> full_{false};
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> fetches_;  // guarded by mu_
};

}  // namespace tpu::daemon
