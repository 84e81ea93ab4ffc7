// The daemon's two Kubernetes threads (DESIGN §8):
//   LeaseKeeper  — acquires and renews the coordination.k8s.io/v1 Lease every
//                  retry period; reports gaining and losing leadership.
//   NodeWatch    — keeps a list + watch of Nodes (re-listing after 410 Gone)
//                  and calls back on every change, so quota in `ready` mode
//                  follows Nodes as they become Ready.
// Each owns one thread, started by Start() and joined by Stop() (idempotent,
// also from the destructor). Callbacks run on that thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "kube/client.h"
#include "kube/leader_election.h"

namespace tpu::daemon {

class LeaseKeeper {
 public:
  // `elector` must outlive this object. on_started/on_stopped: leadership
  // gained / lost (a renew failed past the renew deadline).
  LeaseKeeper(kube::LeaderElector& elector, std::chrono::milliseconds retry_period,
              std::function<void()> on_started, std::function<void()> on_stopped);
  ~LeaseKeeper() { Stop(); }
  void Start();
  // Stops renewing and gives the lease up, so another replica need not wait
  // for it to expire.
  void Stop();
  bool leader() const { return leader_; }

 private:
  void Run();

  kube::LeaderElector& elector_;
  const std::chrono::milliseconds retry_period_;
  std::function<void()> on_started_, on_stopped_;
  std::atomic<bool> leader_{false};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};

class NodeWatch {
 public:
  // `client` must outlive this object.
  NodeWatch(kube::KubeClient& client, std::function<void()> on_change);
  ~NodeWatch() { Stop(); }
  void Start();
  void Stop();
  // Full lists so far (1 after the start; +1 for each re-list after a 410).
  uint64_t lists() const { return lists_; }
  uint64_t errors() const { return errors_; }

 private:
  void Run();

  kube::KubeClient& client_;
  std::function<void()> on_change_;
  std::atomic<uint64_t> lists_{0};
  std::atomic<uint64_t> errors_{0};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace tpu::daemon
