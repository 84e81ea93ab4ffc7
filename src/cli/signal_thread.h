// Signals for the commands that run work (apply): SIGINT/SIGTERM interrupt,
// SIGWINCH says the terminal changed size. The signals are blocked before any
// other thread starts (construct this first) and taken by a SignalWatcher
// (base/signal_watcher.h), so no work happens in a signal handler and a
// handler can safely take locks.
#pragma once

#include <functional>
#include <memory>
#include <mutex>

#include "base/signal_watcher.h"

namespace tpu::cli {

class SignalThread {
 public:
  SignalThread();   // blocks the signals in the calling thread (and the ones it starts)
  ~SignalThread();  // stops the watcher; the signals stay blocked
  SignalThread(const SignalThread&) = delete;
  SignalThread& operator=(const SignalThread&) = delete;

  // Replace what SIGINT/SIGTERM and SIGWINCH do; may be called at any time,
  // but not from inside one of the functions (they run under the same lock).
  void OnInterrupt(std::function<void()> f);
  void OnResize(std::function<void()> f);

 private:
  void Dispatch(int signo);

  std::mutex mu_;
  std::function<void()> on_interrupt_;  // guarded by mu_
  std::function<void()> on_resize_;     // guarded by mu_
  std::unique_ptr<SignalWatcher> watcher_;  // null if signalfd failed: signals then stay blocked, unseen
};

}  // namespace tpu::cli
