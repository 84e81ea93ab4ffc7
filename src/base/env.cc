// Env::Default(): the real clocks, files and environment.
#include "base/env.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace tpu {
namespace {

Status Failure(const std::string& path, int err) {
  std::string why = path + ": " + std::strerror(err);
  if (err == ENOENT || err == ENOTDIR) return Status::NotFound(why);
  return Status::IoError(why);
}

class MachineEnv : public Env {
 public:
  SteadyTime Now() const override { return std::chrono::steady_clock::now(); }
  WallTime WallNow() const override { return std::chrono::system_clock::now(); }
  void SleepFor(std::chrono::steady_clock::duration d) override { std::this_thread::sleep_for(d); }

  Result<std::string> ReadFile(const std::string& path) const override {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Failure(path, errno);
    std::string text;
    char buf[16384];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) {
        text.append(buf, static_cast<size_t>(n));
      } else if (n == 0) {
        break;
      } else if (errno != EINTR) {
        const int err = errno;
        ::close(fd);
        return Failure(path, err);  // a directory: EISDIR
      }
    }
    ::close(fd);
    return text;
  }

  std::optional<std::string> Var(const std::string& name) const override {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  }
};

}  // namespace

Env& Env::Default() {
  static MachineEnv env;
  return env;
}

std::string TrimSpace(const std::string& s) {
  const char* ws = " \t\r\n";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

}  // namespace tpu
