// HttpServer: see http_server.h.
#include "daemon/http_server.h"

#include "base/elastic_task_queue.h"

#include <httplib.h>

#include "daemon/status_json.h"

namespace tpu::daemon {

Status ParseListenAddress(const std::string& listen, std::string* host, int* port) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return Status::InvalidArgument("--listen \"" + listen + "\": expected HOST:PORT");
  std::string h = listen.substr(0, colon);
  std::string p = listen.substr(colon + 1);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (h.empty()) h = "0.0.0.0";
  if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(p) > 65535)
    return Status::InvalidArgument("--listen \"" + listen + "\": bad port");
  *host = h;
  *port = std::stoi(p);
  return Status::OK();
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& listen, HttpHandlers h) {
  std::string host;
  int port = 0;
  if (Status s = ParseListenAddress(listen, &host, &port); !s.ok()) return s;
  std::unique_ptr<HttpServer> self(new HttpServer());
  self->server_ = std::make_unique<httplib::Server>();
  httplib::Server& srv = *self->server_;
  // A few workers suffice: scrapes, status reads and webhooks are tiny; none
  // is kept while nobody calls.
  srv.new_task_queue = [] { return new ElasticTaskQueue(4); };
  srv.set_payload_max_length(1 << 20);  // webhook bodies; GitHub caps payloads at 25 MB but pushes are small

  srv.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  srv.Get("/readyz", [h](const httplib::Request&, httplib::Response& res) {
    bool ready = h.status().ready;
    res.status = ready ? 200 : 503;
    res.set_content(ready ? "ready\n" : "not ready: first reconcile not complete\n", "text/plain");
  });
  srv.Get("/metrics", [h](const httplib::Request&, httplib::Response& res) {
    res.set_content(MetricsText(h.status(), h.extra_metrics()), "text/plain; version=0.0.4");
  });
  srv.Get("/status", [h](const httplib::Request&, httplib::Response& res) {
    res.set_content(StatusJson(h.status()).dump(2) + "\n", "application/json");
  });
  srv.Post("/hooks/git", [h](const httplib::Request& req, httplib::Response& res) {
    if (!h.webhook) {
      res.status = 404;
      res.set_content("webhook not configured\n", "text/plain");
      return;
    }
    WebhookReply reply =
        h.webhook->Handle(req.body, [&req](const std::string& name) { return req.get_header_value(name); });
    res.status = reply.http_status;
    res.set_content(reply.body, "text/plain");
  });

  if (port == 0) {
    int bound = srv.bind_to_any_port(host);
    if (bound < 0) return Status::IoError("listen on " + listen + ": cannot bind");
    self->port_ = bound;
  } else {
    if (!srv.bind_to_port(host, port)) return Status::IoError("listen on " + listen + ": cannot bind");
    self->port_ = port;
  }
  self->thread_ = std::thread([&srv] { srv.listen_after_bind(); });
  return self;
}

void HttpServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

HttpServer::~HttpServer() { Stop(); }

}  // namespace tpu::daemon
