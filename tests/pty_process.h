// A program run on a pseudo-terminal, as a person at a terminal runs it:
// forkpty() with a window size, its output read from the master side, input
// typed into it, and the window resized (TIOCSWINSZ, which makes the kernel
// send SIGWINCH to the program).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

namespace tpu::test_support {

class PtyProcess {
 public:
  // Runs `command` with /bin/sh on a new terminal of `columns` x `rows`.
  PtyProcess(const std::string& command, int columns, int rows) {
    winsize ws{};
    ws.ws_col = static_cast<unsigned short>(columns);
    ws.ws_row = static_cast<unsigned short>(rows);
    pid_ = forkpty(&master_, nullptr, nullptr, &ws);
    if (pid_ == 0) {
      execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~PtyProcess() {
    if (pid_ > 0 && status_ < 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (master_ >= 0) close(master_);
  }
  PtyProcess(const PtyProcess&) = delete;
  PtyProcess& operator=(const PtyProcess&) = delete;

  bool started() const { return pid_ > 0; }

  // Output written since the last call, waiting up to `wait` for some. Empty
  // at the end of output (the program exited and its terminal closed).
  std::string Read(std::chrono::milliseconds wait) {
    pollfd p{master_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(wait.count())) <= 0) return "";
    char buf[8192];
    ssize_t n = read(master_, buf, sizeof buf);
    if (n <= 0) {
      eof_ = true;
      return "";
    }
    return std::string(buf, static_cast<size_t>(n));
  }
  bool eof() const { return eof_; }

  void Type(const std::string& text) { (void)!write(master_, text.data(), text.size()); }

  void Resize(int columns, int rows) {
    winsize ws{};
    ws.ws_col = static_cast<unsigned short>(columns);
    ws.ws_row = static_cast<unsigned short>(rows);
    ioctl(master_, TIOCSWINSZ, &ws);
  }

  // Waits for the exit; its code, or -1 when it was killed by a signal.
  int Wait() {
    if (status_ < 0 && waitpid(pid_, &status_, 0) != pid_) status_ = -1;
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
  }

 private:
  pid_t pid_ = -1;
  int master_ = -1;
  int status_ = -1;
  bool eof_ = false;
};

}  // namespace tpu::test_support
