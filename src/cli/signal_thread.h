// Signals for the commands that run work (apply): SIGINT/SIGTERM interrupt,
// SIGWINCH says the terminal changed size. The signals are blocked before any
// other thread starts (construct this first) and taken by sigwait() on one
// thread of ours, so no work happens in a signal handler and a handler can
// safely take locks.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <functional>
#include <mutex>
#include <thread>

namespace tpu::cli {

class SignalThread {
 public:
  SignalThread();   // blocks the signals in the calling thread (and the ones it starts)
  ~SignalThread();  // stops the thread; the signals stay blocked
  SignalThread(const SignalThread&) = delete;
  SignalThread& operator=(const SignalThread&) = delete;

  // Replace what SIGINT/SIGTERM and SIGWINCH do; may be called at any time,
  // but not from inside one of the functions (they run under the same lock).
  void OnInterrupt(std::function<void()> f);
  void OnResize(std::function<void()> f);

 private:
  sigset_t set_;
  std::mutex mu_;
  std::function<void()> on_interrupt_;
  std::function<void()> on_resize_;
  std::thread thread_;
};

}  // namespace tpu::cli
