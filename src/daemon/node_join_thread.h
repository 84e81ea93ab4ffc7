// NodeJoinThread: runs the node join (nodes/node_joiner.h) on its own thread,
// one pass every interval over the groups the loop last handed it, and
// reports each group's progress for /status and the metrics. It writes only
// while `may_act` says so (the leader, or the replica owning the target).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "daemon/daemon_status.h"
#include "daemon/nodes_port.h"
#include "nodes/node_joiner.h"

namespace tpu::daemon {

class NodeJoinThread : public NodesPort {
 public:
  // `kube` (a writer) and `compute` must outlive this object.
  NodeJoinThread(kube::KubeClient& kube, cloud::ComputeClient& compute, std::chrono::milliseconds interval,
                 std::function<bool(const std::string& target_key)> may_act);
  ~NodeJoinThread() override { Stop(); }

  void SetTarget(const manifest::Target& target) override;
  Status Cordon(const std::string& group) override;
  void NoteApply(const std::string& group, const std::string& reason, const std::string& message) override;

  void Start();
  void Stop();
  NodeGroupsStatus Snapshot() const;

 private:
  void Run();
  void Pass();

  const std::chrono::milliseconds interval_;
  std::function<bool(const std::string&)> may_act_;
  std::mutex joiner_mu_;  // one pass or one cordon at a time
  nodes::NodeJoiner joiner_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<manifest::Target> target_;  // guarded by mu_
  bool wake_ = false;                       // guarded by mu_
  NodeGroupsStatus status_;                 // guarded by mu_
  // Groups whose last apply failed: reason and message, by group. Guarded by mu_.
  std::map<std::string, std::pair<std::string, std::string>> apply_failures_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace tpu::daemon
