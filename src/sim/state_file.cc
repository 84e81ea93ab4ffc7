// Atomic state file I/O (see state_file.h).
#include "sim/state_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tpu::sim {

Status WriteStateFile(const std::string& path, const json& state) {
  const std::string tmp = path + ".tmp";
  const std::string data = state.dump(1);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError(tmp + ": " + std::strerror(errno));
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      Status s = Status::IoError(tmp + ": " + std::strerror(errno));
      ::close(fd);
      return s;
    }
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    Status s = Status::IoError(tmp + ": fsync: " + std::strerror(errno));
    ::close(fd);
    return s;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return Status::IoError(path + ": rename: " + std::strerror(errno));
  // The rename itself is durable only once the directory is synced.
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::OK();
}

Result<std::optional<json>> ReadStateFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) return std::optional<json>();
    return Status::IoError(path + ": " + std::strerror(errno));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::IoError(path + ": not valid JSON");
  return std::optional<json>(std::move(j));
}

}  // namespace tpu::sim
