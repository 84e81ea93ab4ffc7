// CancelToken: ends a long-running HTTP call (a Kubernetes watch stream) at
// once from another thread (HttpRequest::cancel). A watch otherwise notices a stop only when its stream
// delivers something or the server ends it (timeoutSeconds, often minutes),
// which would hold a stopping daemon past its pod's grace period.
//
// Cancel() marks the token and shuts down every socket the calls holding it
// have open, so a transfer blocked in poll() wakes with an error at once; the
// transport then sees the mark and reports a clean stop. Reset() re-arms it
// for an owner that starts again.
//
// Thread-safe: any thread may Cancel; the transport registers its sockets
// from the calling thread.
#pragma once

#include <atomic>
#include <mutex>
#include <set>

namespace tpu::http {

class CancelToken {
 public:
  void Cancel();
  void Reset();
  bool cancelled() const { return cancelled_.load(); }

  // For transports: a socket that Cancel() must shut down while it is open.
  // Add on a cancelled token shuts the socket down at once.
  void AddSocket(int fd);
  void RemoveSocket(int fd);

 private:
  std::mutex mu_;  // orders Add/Remove against Cancel, so a closed fd is never shut down
  std::atomic<bool> cancelled_{false};
  std::set<int> sockets_;
};

}  // namespace tpu::http
