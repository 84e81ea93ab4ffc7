// NodeJoinThread: see node_join_thread.h.
#include "daemon/node_join_thread.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace tpu::daemon {
namespace {

int64_t WallSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

NodeJoinThread::NodeJoinThread(kube::KubeClient& kube, cloud::ComputeClient& compute,
                               std::chrono::milliseconds interval, std::function<bool(const std::string&)> may_act)
    : interval_(interval), may_act_(std::move(may_act)), joiner_(kube, compute, WallSeconds) {
  status_.enabled = true;
}

void NodeJoinThread::SetTarget(const manifest::Target& target) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool changed = !target_ || target_->Key() != target.Key() || target_->groups.size() != target.groups.size();
  target_ = target;
  status_.target = target.Key();
  // A new group, or one gone, is worth a pass now rather than at the next tick.
  if (changed) {
    wake_ = true;
    cv_.notify_all();
  }
}

Status NodeJoinThread::Cordon(const std::string& group) {
  std::lock_guard<std::mutex> lock(joiner_mu_);
  Status s = joiner_.Cordon(group);
  if (s.ok()) spdlog::info("nodes: cordoned the nodes of TPUNodeGroup {} before its teardown", group);
  return s;
}

void NodeJoinThread::NoteApply(const std::string& group, const std::string& reason, const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (reason.empty()) apply_failures_.erase(group);
  else apply_failures_[group] = {reason, message};
}

void NodeJoinThread::Start() {
  thread_ = std::thread([this] { Run(); });
}

void NodeJoinThread::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);  // so the wait cannot miss it
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

NodeGroupsStatus NodeJoinThread::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

void NodeJoinThread::Run() {
  while (!stop_) {
    Pass();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, interval_, [this] { return stop_.load() || wake_; });
    wake_ = false;
  }
}

void NodeJoinThread::Pass() {
  std::optional<manifest::Target> target;
  {
    std::lock_guard<std::mutex> lock(mu_);
    target = target_;
  }
  if (!target || !may_act_(target->Key())) return;
  std::vector<nodes::GroupNodeStatus> groups;
  nodes::JoinCounters counters;
  {
    std::lock_guard<std::mutex> lock(joiner_mu_);
    // A cluster with no TPUNodeGroup (GKE beside Kueue) costs one look, not
    // a Node list every interval.
    if (target->groups.empty() && joiner_.quiet()) return;
    groups = joiner_.Sync(target->project, nodes::JoinGroupsOf(*target));
    counters = joiner_.counters();
  }
  std::lock_guard<std::mutex> lock(mu_);
  // The apply's failures come first: a group whose MIG could not be made has
  // no VMs to report on.
  for (auto& g : groups) {
    auto failed = apply_failures_.find(g.name);
    if (failed == apply_failures_.end()) continue;
    if (g.phase == "Ready") {  // whatever failed then, the group is whole now
      apply_failures_.erase(failed);
      continue;
    }
    g.phase = "Failed";
    g.reason = failed->second.first;
    g.message = failed->second.second;
  }
  for (const auto& g : groups) {
    auto before = std::find_if(status_.groups.begin(), status_.groups.end(),
                               [&](const nodes::GroupNodeStatus& o) { return o.name == g.name; });
    if (before == status_.groups.end() || before->phase != g.phase || before->ready != g.ready)
      spdlog::info("nodes: TPUNodeGroup {}: {} ({}/{} instances, {} joined, {} Ready){}", g.name, g.phase,
                   g.instances, g.requested, g.joined, g.ready, g.reason.empty() ? "" : ": " + g.reason);
    if (!g.last_error.empty() && (before == status_.groups.end() || before->last_error != g.last_error))
      spdlog::warn("nodes: TPUNodeGroup {}: {}", g.name, g.last_error);
  }
  status_.groups = std::move(groups);
  status_.counters = counters;
  ++status_.passes;
}

}  // namespace tpu::daemon
