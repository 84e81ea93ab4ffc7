// CancelToken: see cancel.h.
#include "http/cancel.h"

#include <sys/socket.h>

namespace tpu::http {

void CancelToken::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  for (int fd : sockets_) ::shutdown(fd, SHUT_RDWR);
}

void CancelToken::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = false;
}

void CancelToken::AddSocket(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  sockets_.insert(fd);
  if (cancelled_) ::shutdown(fd, SHUT_RDWR);
}

void CancelToken::RemoveSocket(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  sockets_.erase(fd);
}

}  // namespace tpu::http
