// A deeper listen backlog for an httplib server. Debian's httplib listens with
// a backlog of 5, so a client that opens dozens of connections at once (the
// event loop, http/curl_multi.h: one connection per request in flight over
// HTTP/1.1) has the SYNs past the backlog dropped and retried a second later —
// a second that real Google front ends never cost. Linux raises a listening
// socket's backlog when listen() is called on it again, so the socket-options
// hook records the listening socket and the returned function re-listens.
#pragma once

#include <sys/socket.h>

#include <functional>
#include <memory>

#include <httplib.h>

namespace tpu::sim {

// Call before bind_to_*_port; call what it returns after.
inline std::function<void()> DeepenListenBacklog(httplib::Server& svr, int backlog = 1024) {
  auto fd = std::make_shared<int>(-1);
  svr.set_socket_options([fd](socket_t sock) {
    httplib::default_socket_options(sock);
    *fd = sock;
  });
  return [fd, backlog] {
    if (*fd >= 0) ::listen(*fd, backlog);
  };
}

}  // namespace tpu::sim
