// The signal thread (see signal_thread.h).
#include "cli/signal_thread.h"

namespace tpu::cli {
namespace {
// Our own "stop": sent by the destructor to end the sigwait() loop.
constexpr int kStop = SIGUSR2;
}  // namespace

SignalThread::SignalThread() {
  sigemptyset(&set_);
  for (int s : {SIGINT, SIGTERM, SIGWINCH, kStop}) sigaddset(&set_, s);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  thread_ = std::thread([this] {
    int sig = 0;
    while (sigwait(&set_, &sig) == 0) {
      if (sig == kStop) return;
      // Called under the lock, so once OnResize()/OnInterrupt() returns, the
      // function it replaced is not running and never runs again.
      std::lock_guard<std::mutex> l(mu_);
      const auto& f = sig == SIGWINCH ? on_resize_ : on_interrupt_;
      if (f) f();
    }
  });
}

SignalThread::~SignalThread() {
  pthread_kill(thread_.native_handle(), kStop);
  thread_.join();
}

void SignalThread::OnInterrupt(std::function<void()> f) {
  std::lock_guard<std::mutex> l(mu_);
  on_interrupt_ = std::move(f);
}

void SignalThread::OnResize(std::function<void()> f) {
  std::lock_guard<std::mutex> l(mu_);
  on_resize_ = std::move(f);
}

}  // namespace tpu::cli
