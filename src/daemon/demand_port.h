// DemandPort: the DemandHook (demand_hook.h) over demand::Controller, for the
// one Kubernetes cluster `watch` talks to. It picks the target whose
// Cluster.spec.demand applies — `--kube-target`, or else the only target with
// spec.demand — because pods of one cluster must never make pools in two; with
// several candidates and no flag it acts for none and says why in /status.
//
// Thread-safety: the DemandHook methods run on the loop's thread; Snapshot()
// may be called from any thread (the HTTP server's).
#pragma once

#include <mutex>
#include <string>

#include "daemon/daemon_status.h"
#include "daemon/demand_hook.h"
#include "demand/controller.h"
#include "kube/timestamps.h"

namespace tpu::daemon {

class DemandPort : public DemandHook {
 public:
  // `controller`, `kube_clock` and `clock` must outlive this object.
  // `kube_target` is --kube-target ("" when not given).
  DemandPort(demand::Controller& controller, Clock& kube_clock, const Clock& clock,
             std::string kube_target);

  std::set<std::string> TargetsDue(TimePoint now) override;
  TimePoint NextDue() const override;
  void SetRevision(const manifest::Repo& repo) override;
  std::vector<plan::Action> ExtraActions(const manifest::Target& target,
                                         const cloud::LiveState& live) override;
  void AfterApply(const plan::Plan& applied, const apply::ApplyReport& report) override;

  DemandStatus Snapshot() const;

 private:
  demand::Controller& controller_;
  Clock& kube_clock_;
  const Clock& clock_;
  const std::string kube_target_;
  std::string target_;  // loop thread; mirrored into status_

  mutable std::mutex mu_;  // guards status_
  DemandStatus status_;
};

}  // namespace tpu::daemon
