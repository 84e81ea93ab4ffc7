// The daemon's Kubernetes threads:
//   LeaseKeeper  — acquires and renews the coordination.k8s.io/v1 Lease every
//                  retry period; reports gaining and losing leadership.
//   ResourceWatch — keeps a list + watch of one kind (re-listing after 410
//                  Gone) and calls back on every change: Nodes, so quota in
//                  `ready` mode follows them as they become Ready; Kueue
//                  Workloads, so the scale-down gate need not list them.
// Each owns one thread, started by Start() and joined by Stop() (idempotent,
// also from the destructor). Callbacks run on that thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http/cancel.h"
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

// A list + watch of one kind of object on its own thread (re-listing after
// 410 Gone, retrying errors with a capped backoff), calling back on every
// change. With `keep_objects` it also keeps a copy of the objects that other
// threads may read (Objects()), so they need not list them again.
class ResourceWatch {
 public:
  struct Options {
    std::string name;  // "nodes": for logs and metrics
    // The resource to watch, asked before every list: a Kueue version is
    // discovered once Kueue is served. An error is retried like a failed list.
    std::function<Result<kube::ResourceRef>()> resolve;
    kube::ListOptions selectors;
    bool keep_objects = false;
  };
  // `client` must outlive this object.
  ResourceWatch(kube::KubeClient& client, Options options, std::function<void()> on_change);
  ~ResourceWatch() { Stop(); }
  void Start();
  // Ends the open watch at once (any thread); Stop() then only joins.
  void RequestStop();
  void Stop();
  // Full lists so far (1 after the start; +1 for each re-list after a 410).
  uint64_t lists() const { return lists_; }
  uint64_t errors() const { return errors_; }
  // With keep_objects: every object as last seen; nullopt until the first
  // list. As any watch cache, it may lag the server by the events in flight.
  std::optional<std::vector<kube::json>> Objects() const;

 private:
  void Run();

  kube::KubeClient& client_;
  const Options options_;
  std::function<void()> on_change_;
  std::atomic<uint64_t> lists_{0};
  std::atomic<uint64_t> errors_{0};
  std::atomic<bool> stop_{false};
  http::CancelToken cancel_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<std::vector<kube::json>> objects_;  // guarded by mu_
  std::thread thread_;
};

// Nodes of GKE node pools: quota in `ready` mode follows them.
ResourceWatch::Options NodeWatchOptions();

}  // namespace tpu::daemon
