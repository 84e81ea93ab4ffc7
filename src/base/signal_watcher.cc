// BlockSignals, WaitForSignal and SignalWatcher: see signal_watcher.h.
#include "base/signal_watcher.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tpu {
namespace {

sigset_t SetOf(const std::vector<int>& signals) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : signals) sigaddset(&set, s);
  return set;
}

}  // namespace

Status BlockSignals(const std::vector<int>& signals) {
  sigset_t set = SetOf(signals);
  int rc = pthread_sigmask(SIG_BLOCK, &set, nullptr);
  if (rc != 0) return Status::Internal(std::string("pthread_sigmask: ") + std::strerror(rc));
  return Status::OK();
}

Result<int> WaitForSignal(const std::vector<int>& signals) {
  sigset_t set = SetOf(signals);
  int sig = 0;
  int rc = sigwait(&set, &sig);
  if (rc != 0) return Status::Internal(std::string("sigwait: ") + std::strerror(rc));
  return sig;
}

Result<std::unique_ptr<SignalWatcher>> SignalWatcher::Start(const std::vector<int>& signals,
                                                            std::function<void(int)> on_signal) {
  sigset_t set = SetOf(signals);
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

void SignalWatcher::SetCallback(std::function<void(int)> on_signal) {
  std::lock_guard<std::mutex> lock(mu_);
  on_signal_ = std::move(on_signal);
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
      if (read(signal_fd_, &info, sizeof info) != static_cast<ssize_t>(sizeof info)) continue;
      std::lock_guard<std::mutex> lock(mu_);
      if (on_signal_) on_signal_(static_cast<int>(info.ssi_signo));
    }
  }
}

}  // namespace tpu
