// HttpServer: the daemon's endpoints on --listen (cpp-httplib):
//   GET /healthz  200 "ok" while the process serves
//   GET /readyz   200 after the first complete reconcile, 503 before
//   GET /metrics  Prometheus text (metrics_text.h)
//   GET /status   JSON (status_json.h)
//   POST /hooks/git  signed webhook → fetch now (git_webhook.h)
// Serves on one thread of its own (started by Start, joined by Stop) with
// httplib's worker pool; handlers only read snapshots and signal the loop.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/status.h"
#include "daemon/daemon_status.h"
#include "daemon/git_webhook.h"
#include "daemon/metrics_text.h"

namespace httplib {
class Server;
}

namespace tpu::daemon {

struct HttpHandlers {
  std::function<DaemonStatus()> status;
  std::function<ExtraMetrics()> extra_metrics;
  GitWebhook* webhook = nullptr;  // must outlive the server; null: /hooks/git is 404
};

// "127.0.0.1:8080", "[::1]:8080", ":8080" (every interface) → host and port.
Status ParseListenAddress(const std::string& listen, std::string* host, int* port);

class HttpServer {
 public:
  // Binds (port 0: an ephemeral port) and starts serving. IoError when the
  // address cannot be bound.
  static Result<std::unique_ptr<HttpServer>> Start(const std::string& listen, HttpHandlers handlers);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  // Stops accepting and joins the serving thread. Idempotent.
  void Stop();

 private:
  HttpServer() = default;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace tpu::daemon
