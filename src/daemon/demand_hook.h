// DemandHook: how demand-driven pools (docs/architecture.md, "Beside Kueue", src/demand/) join the
// reconcile loop. Each pass the Reconciler asks the hook which targets need a
// re-plan (a pending pod appeared, a JobSet finished) and which actions on
// workload-owned pools each planned target needs; they are appended to git's
// actions and applied in the same executor run, so demand-driven creates and
// deletes share the per-cluster lanes with git's changes and never overlap
// them.
//
// The hook wakes the loop itself (a watch thread seeing a pending pod) through
// the callback the Daemon (daemon.h) gives it: DaemonLoop::RequestWake(). Kubernetes
// writes go through the leader-only client cli/kube_setup.h builds, so
// a follower replica never acts.
//
// Thread-safety: every method is called from the loop's thread only.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "apply/executor.h"
#include "cloud/types.h"
#include "daemon/clock.h"
#include "manifest/types.h"
#include "plan/model.h"

namespace tpu::daemon {

class DemandHook {
 public:
  virtual ~DemandHook() = default;

  // Keys ("project/cluster") to re-plan in this pass although git did not
  // change them. Called once per pass, before targets are chosen.
  virtual std::set<std::string> TargetsDue(TimePoint now) = 0;

  // When the hook next wants a pass without being woken (a grace period
  // ending); TimePoint::max() for never.
  virtual TimePoint NextDue() const { return TimePoint::max(); }

  // The revision about to be planned (which target's spec.demand applies).
  // Called on every pass that plans, before ExtraActions.
  virtual void SetRevision(const manifest::Repo& repo) {}

  // Actions on workload-owned pools (demand/names.h: no git ownership
  // marker, so the planner never prunes them nor counts them in its guards),
  // appended to `target`'s executable plan in this pass after git's actions:
  // the same executor run and per-cluster lane. Called for each unblocked,
  // executable target planned this pass, after live state was refreshed.
  virtual std::vector<plan::Action> ExtraActions(const manifest::Target& target,
                                                 const cloud::LiveState& live) {
    return {};
  }

  // After each pass that planned: the plan handed to the executor (empty
  // when nothing ran, e.g. --dry-run or no changes) and what it did. A pass
  // with nothing due (no change, no drift check) calls only TargetsDue.
  virtual void AfterApply(const plan::Plan& applied, const apply::ApplyReport& report) {}
};

}  // namespace tpu::daemon
