// DemandPort: see demand_port.h.
#include "daemon/demand_port.h"

#include <spdlog/spdlog.h>

#include "daemon/kube_target.h"

namespace tpu::daemon {

DemandPort::DemandPort(demand::Controller& controller, Clock& kube_clock, const Clock& clock,
                       std::string kube_target)
    : controller_(controller), kube_clock_(kube_clock), clock_(clock), kube_target_(std::move(kube_target)) {
  status_.enabled = true;
}

std::set<std::string> DemandPort::TargetsDue(TimePoint now) {
  (void)now;
  const bool dirty = controller_.TakeDirty();
  if (target_.empty()) return {};
  auto due = controller_.NextDue();
  if (dirty || (due && *due <= kube_clock_.WallNow())) return {target_};
  return {};
}

TimePoint DemandPort::NextDue() const {
  auto due = controller_.NextDue();
  if (!due || target_.empty()) return TimePoint::max();
  // The controller counts in wall-clock time (grace periods start at JobSet
  // conditions), the loop in steady time. At least a second away, so a due
  // time the last pass could not act on never spins the loop.
  auto in = std::max<WallTime::duration>(*due - kube_clock_.WallNow(), std::chrono::seconds(1));
  return clock_.Now() + std::chrono::duration_cast<Duration>(in);
}

void DemandPort::SetRevision(const manifest::Repo& repo) {
  // Pods of one cluster must make pools in one target.
  KubeTargetChoice choice = ChooseKubeTarget(repo, kube_target_, KubeTargetUse::kDemand);
  const std::string chosen = choice.target ? choice.target->Key() : "";
  const std::string& error = choice.error;
  if (chosen != target_) spdlog::info("demand: target {}", chosen.empty() ? "(none)" : chosen);
  if (!error.empty() && error != status_.error) spdlog::warn("demand: {}", error);
  target_ = chosen;
  std::lock_guard<std::mutex> lock(mu_);
  status_.target = chosen;
  status_.error = error;
}

std::vector<plan::Action> DemandPort::ExtraActions(const manifest::Target& target, const cloud::LiveState& live) {
  if (target.Key() != target_) return {};
  demand::Decision d = controller_.Plan(target, live);
  std::lock_guard<std::mutex> lock(mu_);
  status_.synced = controller_.Synced();
  status_.events = controller_.events_recorded();
  status_.pools.clear();
  status_.chips = 0;
  for (const auto& p : d.pools) {
    status_.pools.push_back({p.name, p.jobset, p.status, p.chips, p.state});
    status_.chips += p.chips;
  }
  return std::move(d.actions);
}

void DemandPort::AfterApply(const plan::Plan& applied, const apply::ApplyReport& report) {
  (void)applied;
  controller_.AfterApply(report);
}

DemandStatus DemandPort::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

}  // namespace tpu::daemon
