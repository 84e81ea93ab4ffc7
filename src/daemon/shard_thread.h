// ShardThread: drives a ShardKeeper (shard/shard_keeper.h) on its own thread,
// one Tick() every retry period, and calls back when the shards held change,
// so the loop re-plans every target it now owns (a takeover adopts the
// operations in flight through the same path as a restart). Stop() gives every
// shard back, so the other replicas need not wait for them to expire.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "shard/shard_keeper.h"

namespace tpu::daemon {

class ShardThread {
 public:
  // `keeper` must outlive this object; on_change runs on the thread.
  ShardThread(shard::ShardKeeper& keeper, std::chrono::milliseconds retry_period, std::function<void()> on_change);
  ~ShardThread() { Stop(); }
  void Start();
  void Stop();

 private:
  void Run();

  shard::ShardKeeper& keeper_;
  const std::chrono::milliseconds retry_period_;
  std::function<void()> on_change_;
  std::atomic<bool> stop_{false};
  bool stopped_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace tpu::daemon
