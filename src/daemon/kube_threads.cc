// LeaseKeeper and NodeWatch: see kube_threads.h.
#include "daemon/kube_threads.h"

#include <algorithm>
#include <memory>

#include <spdlog/spdlog.h>

#include "kube/list_watch.h"

namespace tpu::daemon {
namespace {

// A watch stream is re-opened this often even when nothing happens (Stop()
// does not wait for it: the cancel token ends the stream at once).
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

ResourceWatch::Options NodeWatchOptions() {
  ResourceWatch::Options o;
  o.name = "nodes";
  o.resolve = [] { return Result<kube::ResourceRef>(kube::resources::kNodes); };
  o.selectors.label_selector = "cloud.google.com/gke-nodepool";  // nodes of node pools only
  return o;
}

ResourceWatch::ResourceWatch(kube::KubeClient& client, Options options, std::function<void()> on_change)
    : client_(client), options_(std::move(options)), on_change_(std::move(on_change)) {}

void ResourceWatch::Start() { thread_ = std::thread([this] { Run(); }); }

void ResourceWatch::RequestStop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cancel_.Cancel();
  cv_.notify_all();
}

void ResourceWatch::Stop() {
  RequestStop();
  if (thread_.joinable()) thread_.join();
}

std::optional<std::vector<kube::json>> ResourceWatch::Objects() const {
  std::lock_guard<std::mutex> lock(mu_);
  return objects_;
}

void ResourceWatch::Run() {
  std::unique_ptr<kube::ListWatcher> watcher;
  auto delay = std::chrono::milliseconds(kWatchRetryFirst);
  std::string last_error;
  while (!stop_) {
    Status s;
    if (!watcher) {
      auto ref = options_.resolve();
      if (ref.ok()) watcher = std::make_unique<kube::ListWatcher>(client_, *ref, "", options_.selectors);
      else s = ref.status();
    }
    if (watcher) {
      s = watcher->Step(
          [this, &watcher](const kube::WatchEvent& e) {
            if (e.type == "RELISTED") {
              lists_ = watcher->lists();
              if (lists_ > 1) spdlog::info("{} watch: re-listed (list {})", options_.name, lists_.load());
            }
            if (options_.keep_objects) {
              std::vector<kube::json> copy;
              copy.reserve(watcher->objects().size());
              for (const auto& [key, obj] : watcher->objects()) copy.push_back(obj);
              std::lock_guard<std::mutex> lock(mu_);
              objects_ = std::move(copy);
            }
            if (on_change_) on_change_();
            return !stop_;
          },
          kWatchTimeoutSeconds, &cancel_);
    }
    if (s.ok()) {
      delay = kWatchRetryFirst;
      last_error.clear();
      continue;
    }
    if (stop_) break;
    ++errors_;
    // The same error over and over (Kueue not installed) is logged once.
    if (s.ToString() != last_error)
      spdlog::warn("{} watch: {}; retrying in {} ms", options_.name, s.ToString(), delay.count());
    last_error = s.ToString();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, delay, [this] { return stop_.load(); });
    delay = std::min<std::chrono::milliseconds>(delay * 2, kWatchRetryCap);
  }
}

}  // namespace tpu::daemon
