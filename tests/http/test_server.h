// A cpp-httplib server on a free loopback port, run on its own thread for the
// duration of a test, recording every request it sees. Tests register handlers
// on server() before the first request.
#pragma once

#include <httplib.h>

#include "sim/listen_backlog.h"

#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tpu::http::testing {

struct SeenRequest {
  std::string method;
  std::string path;  // without the query
  std::string query;  // "a=1&b=2" as sent
  std::string body;
  std::multimap<std::string, std::string> params;
  httplib::Headers headers;
  int remote_port = 0;
};

class TestServer {
 public:
  // `threads`: handlers that may run (and block) at once; 0 keeps httplib's default.
  explicit TestServer(size_t threads = 0) {
    if (threads > 0) server_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    // httplib closes a keep-alive connection after 5 requests by default;
    // lift that so connection reuse is observable.
    server_.set_keep_alive_max_count(100000);
    // Without TCP_NODELAY, httplib's separate header and body writes meet the
    // client's delayed ACK: 40 ms per call.
    server_.set_tcp_nodelay(true);
    auto deepen_backlog = sim::DeepenListenBacklog(server_);
    port_ = server_.bind_to_any_port("127.0.0.1");
    deepen_backlog();
    // Post-routing runs before the response is written, so a request is on
    // record by the time its client sees the answer.
    server_.set_post_routing_handler([this](const httplib::Request& req, httplib::Response&) { Record(req); });
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~TestServer() {
    // stop() is a no-op until the listener thread has started running.
    while (!server_.is_running()) std::this_thread::yield();
    server_.stop();
    thread_.join();
  }

  httplib::Server& server() { return server_; }
  int port() const { return port_; }
  // "http://127.0.0.1:PORT/"
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  std::string host_port() const { return "127.0.0.1:" + std::to_string(port_); }

  std::vector<SeenRequest> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }
  size_t request_count() const {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_.size();
  }

 private:
  void Record(const httplib::Request& req) {
    SeenRequest s;
    s.method = req.method;
    s.path = req.path;
    auto q = req.target.find('?');
    if (q != std::string::npos) s.query = req.target.substr(q + 1);
    s.body = req.body;
    s.params = req.params;
    s.headers = req.headers;
    s.remote_port = req.remote_port;
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back(std::move(s));
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<SeenRequest> seen_;
};

}  // namespace tpu::http::testing
