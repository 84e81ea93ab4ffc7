// ShardThread: see shard_thread.h.
#include "daemon/shard_thread.h"

#include <spdlog/spdlog.h>

namespace tpu::daemon {

ShardThread::ShardThread(shard::ShardKeeper& keeper, std::chrono::milliseconds retry_period,
                         std::function<void()> on_change)
    : keeper_(keeper), retry_period_(retry_period), on_change_(std::move(on_change)) {}

void ShardThread::Start() { thread_ = std::thread([this] { Run(); }); }

void ShardThread::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (Status s = keeper_.ReleaseAll(); !s.ok()) spdlog::warn("shards: release: {}", s.ToString());
  else spdlog::info("shards: {} released its shards", keeper_.config().identity);
}

void ShardThread::Run() {
  std::vector<int> held;
  std::string last_error;
  while (!stop_) {
    Status s = keeper_.Tick();
    // Said once per stretch of failures: the shards lapse at their renew deadline meanwhile.
    if (!s.ok() && s.ToString() != last_error) spdlog::warn("shards: {}", s.ToString());
    last_error = s.ok() ? "" : s.ToString();
    std::vector<int> now = keeper_.Snapshot().held;
    if (now != held) {
      spdlog::info("shards: {} holds {} of {} shards", keeper_.config().identity, now.size(), keeper_.config().shards);
      held = std::move(now);
      if (on_change_) on_change_();
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, retry_period_, [this] { return stop_.load(); });
  }
}

}  // namespace tpu::daemon
