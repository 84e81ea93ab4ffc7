// Informer: a kube::ListWatcher on its own thread, so the reconcile loop never
// blocks on a watch. Each change (and each full re-list, after a 410 Gone or
// at start) is handed to `on_change` on the watch thread together with the
// whole current cache; the owner keeps what it needs under its own lock.
// Errors (the API server away, 401 while a token rotates) are retried with a
// capped backoff; RequestStop() ends the open watch at once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "http/cancel.h"
#include "kube/list_watch.h"

namespace tpu::demand {

class Informer {
 public:
  using OnChange = std::function<void(const kube::WatchEvent& event,
                                      const std::map<std::string, kube::json>& objects)>;

  Informer(kube::KubeClient& client, kube::ResourceRef ref, OnChange on_change,
           int watch_timeout_seconds = 60);
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  void Start();
  void Stop();
  void RequestStop();  // Stop() without waiting for the thread
  // Listed at least once (the cache holds every object, not a part).
  bool synced() const { return synced_; }
  int errors() const { return errors_; }

 private:
  void Run();

  kube::ListWatcher watcher_;
  OnChange on_change_;
  int watch_timeout_seconds_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> stop_{false};
  http::CancelToken cancel_;
  std::atomic<bool> synced_{false};
  std::atomic<int> errors_{0};
};

}  // namespace tpu::demand
