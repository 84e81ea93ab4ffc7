// Signals for the daemon, handled with signalfd: no code runs in a signal
// handler. BlockDaemonSignals() must be called before any thread starts (the
// mask is inherited), so SIGTERM, SIGINT and SIGHUP are delivered only to the
// signalfd; SignalWatcher reads it on a thread of its own and calls back.
#pragma once

#include <functional>
#include <memory>
#include <thread>

#include "base/status.h"

namespace tpu::daemon {

// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (and the threads it
// starts from now on).
Status BlockDaemonSignals();

class SignalWatcher {
 public:
  // `on_signal(signo)` runs on the watcher's thread, once per signal received.
  static Result<std::unique_ptr<SignalWatcher>> Start(std::function<void(int)> on_signal);
  ~SignalWatcher();  // stops and joins the thread
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  SignalWatcher(int signal_fd, int stop_fd, std::function<void(int)> on_signal);
  void Loop();
  const int signal_fd_;
  const int stop_fd_;  // an eventfd: written by the destructor to end Loop()
  std::function<void(int)> on_signal_;
  std::thread thread_;
};

}  // namespace tpu::daemon
