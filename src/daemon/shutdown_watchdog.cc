// ShutdownWatchdog: see shutdown_watchdog.h.
#include "daemon/shutdown_watchdog.h"

#include <cstdlib>

#include <spdlog/spdlog.h>

namespace tpu::daemon {

void ShutdownWatchdog::Arm() {
  std::lock_guard<std::mutex> lock(mu_);
  if (armed_ || done_) return;
  armed_ = true;
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, timeout_, [this] { return done_; })) return;
    spdlog::warn("shutdown took longer than {} ms; exiting now, in-flight operations are left to the next run",
                 timeout_.count());
    spdlog::default_logger()->flush();
    std::_Exit(0);
  });
}

void ShutdownWatchdog::Disarm() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace tpu::daemon
