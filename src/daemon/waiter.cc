// WatcherWaiter and EventWaiter: see waiter.h.
#include "daemon/waiter.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tpu::daemon {

Result<WakeReason> WatcherWaiter::Wait(TimePoint deadline) {
  auto r = watcher_->Wait(deadline);
  if (!r.ok()) return r.status();
  WakeReason w;
  w.changed = r->kind == source::WatchResult::Kind::kChanged;
  w.rescan = r->rescan;
  w.woken = r->kind == source::WatchResult::Kind::kWoken;
  return w;
}

Result<std::unique_ptr<EventWaiter>> EventWaiter::Create() {
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return Status::Internal(std::string("eventfd: ") + std::strerror(errno));
  return std::unique_ptr<EventWaiter>(new EventWaiter(fd));
}

EventWaiter::~EventWaiter() { close(fd_); }

void EventWaiter::Wake() {
  uint64_t one = 1;
  (void)!write(fd_, &one, sizeof one);
}

Result<WakeReason> EventWaiter::Wait(TimePoint deadline) {
  WakeReason w;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    int timeout = static_cast<int>(std::clamp<int64_t>(left.count() + 1, 0, 1 << 30));
    pollfd p{fd_, POLLIN, 0};
    int rc = poll(&p, 1, timeout);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return Status::Internal(std::string("poll: ") + std::strerror(errno));
    if (rc > 0) {
      uint64_t n;
      (void)!read(fd_, &n, sizeof n);
      w.woken = true;
      return w;
    }
    if (std::chrono::steady_clock::now() >= deadline) return w;
  }
}

}  // namespace tpu::daemon
