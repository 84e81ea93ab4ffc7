// Informer: ListWatcher::Step in a loop on a thread, with backoff on errors.
#include "demand/informer.h"

#include <spdlog/spdlog.h>

namespace tpu::demand {

Informer::Informer(kube::KubeClient& client, kube::ResourceRef ref, OnChange on_change,
                   int watch_timeout_seconds)
    : watcher_(client, std::move(ref)),
      on_change_(std::move(on_change)),
      watch_timeout_seconds_(watch_timeout_seconds) {}

Informer::~Informer() { Stop(); }

void Informer::Start() {
  if (thread_.joinable()) return;
  stop_ = false;
  cancel_.Reset();
  thread_ = std::thread([this] { Run(); });
}

void Informer::RequestStop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cancel_.Cancel();
  cv_.notify_all();
}

void Informer::Stop() {
  RequestStop();
  if (thread_.joinable()) thread_.join();
}

void Informer::Run() {
  std::chrono::milliseconds backoff{200};
  while (!stop_) {
    Status s = watcher_.Step(
        [this](const kube::WatchEvent& e) {
          if (e.type == "RELISTED") synced_ = true;
          on_change_(e, watcher_.objects());
          return !stop_;
        },
        watch_timeout_seconds_, &cancel_);
    if (s.ok()) {
      backoff = std::chrono::milliseconds(200);
      continue;
    }
    ++errors_;
    spdlog::warn("demand: watch failed, retrying in {}ms: {}", backoff.count(), s.ToString());
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, backoff, [this] { return stop_.load(); });
    backoff = std::min(backoff * 2, std::chrono::milliseconds(30000));
  }
}

}  // namespace tpu::demand
