// Signals handled with signalfd, so no code runs in a signal handler and a
// callback may take locks. The signals must be blocked (BlockSignals) before
// any other thread starts, since threads inherit the mask: then they reach
// only the signalfd, which SignalWatcher reads on a thread of its own. The
// one way every command takes signals: `watch` (SIGTERM, SIGINT, SIGHUP),
// `apply` (SIGINT, SIGTERM, SIGWINCH) and `sim` (SIGINT, SIGTERM).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/status.h"

namespace tpu {

// Blocks `signals` in the calling thread (and the threads it starts from now on).
Status BlockSignals(const std::vector<int>& signals);

// Waits for one of `signals` (blocked beforehand) and returns it.
Result<int> WaitForSignal(const std::vector<int>& signals);

class SignalWatcher {
 public:
  // `on_signal(signo)` runs on the watcher's thread, once per signal received.
  static Result<std::unique_ptr<SignalWatcher>> Start(const std::vector<int>& signals,
                                                      std::function<void(int)> on_signal);
  ~SignalWatcher();  // stops and joins the thread
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  // Replaces the callback. Once this returns, the old one is not running and
  // never runs again. Not from inside the callback (they share a lock).
  void SetCallback(std::function<void(int)> on_signal);

 private:
  SignalWatcher(int signal_fd, int stop_fd, std::function<void(int)> on_signal);
  void Loop();
  const int signal_fd_;
  const int stop_fd_;  // an eventfd: written by the destructor to end Loop()
  std::mutex mu_;
  std::function<void(int)> on_signal_;  // guarded by mu_
  std::thread thread_;
};

}  // namespace tpu
