// BlockDaemonSignals and SignalWatcher: see signals.h.
#include "daemon/signals.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tpu::daemon {
namespace {

sigset_t DaemonSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

Status BlockDaemonSignals() {
  sigset_t set = DaemonSignals();
  int rc = pthread_sigmask(SIG_BLOCK, &set, nullptr);
  if (rc != 0) return Status::Internal(std::string("pthread_sigmask: ") + std::strerror(rc));
  return Status::OK();
}

Result<std::unique_ptr<SignalWatcher>> SignalWatcher::Start(std::function<void(int)> on_signal) {
  sigset_t set = DaemonSignals();
  int sfd = signalfd(-1, &set, SFD_CLOEXEC);
  if (sfd < 0) return Status::Internal(std::string("signalfd: ") + std::strerror(errno));
  int efd = eventfd(0, EFD_CLOEXEC);
  if (efd < 0) {
    close(sfd);
    return Status::Internal(std::string("eventfd: ") + std::strerror(errno));
  }
  return std::unique_ptr<SignalWatcher>(new SignalWatcher(sfd, efd, std::move(on_signal)));
}

SignalWatcher::SignalWatcher(int signal_fd, int stop_fd, std::function<void(int)> on_signal)
    : signal_fd_(signal_fd), stop_fd_(stop_fd), on_signal_(std::move(on_signal)) {
  thread_ = std::thread([this] { Loop(); });
}

SignalWatcher::~SignalWatcher() {
  uint64_t one = 1;
  (void)!write(stop_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  close(signal_fd_);
  close(stop_fd_);
}

void SignalWatcher::Loop() {
  pollfd fds[2] = {{signal_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  while (true) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo info;
      if (read(signal_fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info))
        on_signal_(static_cast<int>(info.ssi_signo));
    }
  }
}

}  // namespace tpu::daemon
