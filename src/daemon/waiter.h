// Waiter: how the loop sleeps until something happens — a change under the
// checkout (inotify, through source::Watcher), a Wake() from another thread
// (webhook, signal), or its deadline. Both kinds block in poll(2): an idle
// daemon uses no CPU. Wait() from the loop's thread; Wake() from any thread.
#pragma once

#include <memory>

#include "base/status.h"
#include "daemon/clock.h"
#include "source/watcher.h"

namespace tpu::daemon {

struct WakeReason {
  bool changed = false;  // files or refs changed
  bool rescan = false;   // inotify lost events: treat everything as changed
  bool woken = false;    // Wake() was called
};

class Waiter {
 public:
  virtual ~Waiter() = default;
  virtual Result<WakeReason> Wait(TimePoint deadline) = 0;
  virtual void Wake() = 0;
};

// Over a source::Watcher (a local checkout: its refs, and deploy/ with --worktree).
class WatcherWaiter : public Waiter {
 public:
  explicit WatcherWaiter(std::unique_ptr<source::Watcher> watcher) : watcher_(std::move(watcher)) {}
  Result<WakeReason> Wait(TimePoint deadline) override;
  void Wake() override { watcher_->Wake(); }

 private:
  std::unique_ptr<source::Watcher> watcher_;
};

// Only Wake() and deadlines (a remote source: nothing local to watch).
class EventWaiter : public Waiter {
 public:
  static Result<std::unique_ptr<EventWaiter>> Create();
  ~EventWaiter() override;
  Result<WakeReason> Wait(TimePoint deadline) override;
  void Wake() override;

 private:
  explicit EventWaiter(int fd) : fd_(fd) {}
  const int fd_;
};

}  // namespace tpu::daemon
