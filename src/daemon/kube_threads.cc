// LeaseKeeper and NodeWatch: see kube_threads.h.
#include "daemon/kube_threads.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "kube/list_watch.h"

namespace tpu::daemon {
namespace {

// A watch stream is re-opened this often even when nothing happens, which also
// bounds how long Stop() waits on a server that sends no bookmarks (well
// inside watch's default --shutdown-timeout of 30s).
constexpr int kWatchTimeoutSeconds = 10;
// Retry delays after a failed list or watch: doubling from the first to the cap.
constexpr auto kWatchRetryFirst = std::chrono::milliseconds(500);
constexpr auto kWatchRetryCap = std::chrono::seconds(30);

}  // namespace

LeaseKeeper::LeaseKeeper(kube::LeaderElector& elector, std::chrono::milliseconds retry_period,
                         std::function<void()> on_started, std::function<void()> on_stopped)
    : elector_(elector), retry_period_(retry_period), on_started_(std::move(on_started)),
      on_stopped_(std::move(on_stopped)) {}

void LeaseKeeper::Start() { thread_ = std::thread([this] { Run(); }); }

void LeaseKeeper::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (leader_.exchange(false)) {
    if (Status s = elector_.Release(); !s.ok()) spdlog::warn("leader election: release: {}", s.ToString());
    else spdlog::info("leader election: lease released");
  }
}

void LeaseKeeper::Run() {
  const auto& c = elector_.config();
  bool logged_error = false;
  while (!stop_) {
    auto held = elector_.TryAcquireOrRenew();
    if (!held.ok() && !logged_error) {
      spdlog::warn("leader election: lease {}/{}: {}", c.ns, c.name, held.status().ToString());
      logged_error = true;
    }
    if (held.ok()) logged_error = false;
    const bool now_leader = elector_.IsLeader();
    if (now_leader && !leader_) {
      leader_ = true;
      spdlog::info("leader election: {} acquired lease {}/{}", c.identity, c.ns, c.name);
      if (on_started_) on_started_();
    } else if (!now_leader && leader_) {
      leader_ = false;
      spdlog::warn("leader election: {} lost lease {}/{}", c.identity, c.ns, c.name);
      if (on_stopped_) on_stopped_();
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, retry_period_, [this] { return stop_.load(); });
  }
}

NodeWatch::NodeWatch(kube::KubeClient& client, std::function<void()> on_change)
    : client_(client), on_change_(std::move(on_change)) {}

void NodeWatch::Start() { thread_ = std::thread([this] { Run(); }); }

void NodeWatch::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void NodeWatch::Run() {
  kube::ListOptions selectors;
  selectors.label_selector = "cloud.google.com/gke-nodepool";  // nodes of node pools only
  kube::ListWatcher watcher(client_, kube::resources::kNodes, "", selectors);
  auto delay = std::chrono::milliseconds(kWatchRetryFirst);
  while (!stop_) {
    const int lists_before = watcher.lists();
    Status s = watcher.Step(
        [this](const kube::WatchEvent&) {
          if (on_change_) on_change_();
          return !stop_;
        },
        kWatchTimeoutSeconds, &stop_);
    if (watcher.lists() != lists_before) {
      lists_ = watcher.lists();
      if (lists_ > 1) spdlog::info("node watch: re-listed nodes (list {})", lists_.load());
    }
    if (s.ok()) {
      delay = kWatchRetryFirst;
      continue;
    }
    ++errors_;
    spdlog::warn("node watch: {}; retrying in {} ms", s.ToString(), delay.count());
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, delay, [this] { return stop_.load(); });
    delay = std::min<std::chrono::milliseconds>(delay * 2, kWatchRetryCap);
  }
}

}  // namespace tpu::daemon
