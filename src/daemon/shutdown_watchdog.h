// ShutdownWatchdog: bounds how long a stopping daemon may take. Armed when
// SIGTERM arrives; if the process has not finished within the timeout (an
// API call hanging past its own timeouts), it logs and exits 0 anyway:
// nothing is lost, since the next run finds in-flight operations in the cloud
// (docs/architecture.md, "Apply rules"). Owns one thread while armed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace tpu::daemon {

class ShutdownWatchdog {
 public:
  explicit ShutdownWatchdog(std::chrono::milliseconds timeout) : timeout_(timeout) {}
  ~ShutdownWatchdog() { Disarm(); }
  ShutdownWatchdog(const ShutdownWatchdog&) = delete;
  ShutdownWatchdog& operator=(const ShutdownWatchdog&) = delete;

  // Starts the countdown; later calls do nothing. Any thread.
  void Arm();
  // The process finished in time: stop the countdown and join. Idempotent.
  void Disarm();

 private:
  const std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace tpu::daemon
