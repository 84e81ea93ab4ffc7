// The signal thread (see signal_thread.h).
#include "cli/signal_thread.h"

#include <signal.h>

#include <cstdio>

namespace tpu::cli {
namespace {
const std::vector<int> kSignals = {SIGINT, SIGTERM, SIGWINCH};
}  // namespace

SignalThread::SignalThread() {
  Status blocked = BlockSignals(kSignals);
  auto watcher = SignalWatcher::Start(kSignals, [this](int signo) { Dispatch(signo); });
  if (blocked.ok() && watcher.ok()) {
    watcher_ = std::move(watcher.value());
    return;
  }
  std::fprintf(stderr, "warning: signals: %s\n",
               (blocked.ok() ? watcher.status() : blocked).ToString().c_str());
}

SignalThread::~SignalThread() { watcher_.reset(); }

void SignalThread::Dispatch(int signo) {
  // Called under the lock, so once OnResize()/OnInterrupt() returns, the
  // function it replaced is not running and never runs again.
  std::lock_guard<std::mutex> l(mu_);
  const auto& f = signo == SIGWINCH ? on_resize_ : on_interrupt_;
  if (f) f();
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
