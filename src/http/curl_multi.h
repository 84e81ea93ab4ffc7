// CurlMultiLoop: every request in flight driven by ONE event-loop thread with
// libcurl's multi interface (docs/architecture.md, "Threads"), so a thousand
// calls in flight cost a thousand easy handles, not a thousand threads.
//
// Submit() queues a request and returns at once; its `done` runs on the loop
// thread when the response (or the failure) is in, so it must be cheap: the
// apply's scheduler only queues the continuation for one of its workers. Send()
// is Submit() plus a wait, for synchronous callers (credentials, single GETs;
// the refresh submits its lists); it must not be called from a `done`
// callback (the loop thread would wait for itself: it returns Internal instead).
//
// The multi handle owns one connection cache: connections are kept alive and
// reused by every request (at most `max_host_connections` to one host; the
// rest queue inside libcurl until one is free; over HTTP/2 they share a
// connection as streams). Same rules and errors as CurlTransport, from the same
// code (curl_easy.h): TLS verified, plain http only to loopback and the
// metadata server unless `insecure`, connect and whole-request timeouts,
// CancelToken (the loop also checks tokens every 100 ms, for a transfer whose
// socket is not open yet). Streaming requests (`on_chunk`, Kubernetes watches)
// stay on CurlTransport: a stream would hold one of the host's connections for
// minutes and run its callback on the loop thread.
//
// Thread-safe: Submit() and Send() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <cstdint>
#include <memory>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

#include "http/curl_transport.h"
#include "http/transport.h"

namespace tpu::http {

class CurlMultiLoop : public HttpTransport {
 public:
  // Connections to one host at once. Google's front ends speak HTTP/2, where
  // one connection carries up to a hundred requests, so this is rarely
  // reached there; over HTTP/1.1 (the emulator) it is the number of requests
  // in flight: 256 send an apply's thousand creates at 50 ms a request in
  // about 0.2 s. Not more: an HTTP/1.1 server (the emulator, cpp-httplib)
  // spends a thread waking every 10 ms on each connection kept alive.
  static constexpr long kDefaultMaxHostConnections = 256;

  explicit CurlMultiLoop(CurlTransportOptions options = {},
                         long max_host_connections = kDefaultMaxHostConnections);
  // Requests still in flight end with Unavailable ("HTTP loop stopped").
  ~CurlMultiLoop() override;
  CurlMultiLoop(const CurlMultiLoop&) = delete;
  CurlMultiLoop& operator=(const CurlMultiLoop&) = delete;

  void Submit(HttpRequest request, Done done) override;
  Result<HttpResponse> Send(const HttpRequest& request) override;
  // `fn` runs on the loop thread once `delay` has passed (timers are checked
  // each time the loop wakes; it wakes for the earliest). Like `done`, it
  // must be cheap. Timers still pending when the loop stops never run.
  void RunAfter(std::chrono::milliseconds delay, std::function<void()> fn) override;
  bool HasEventLoop() const override { return true; }

  // New TCP connections opened so far (reuse keeps this low). For tests and metrics.
  int64_t connections_opened() const { return connections_opened_.load(); }
  // Requests submitted and not yet answered: now, and the most at once.
  int in_flight() const;
  int peak_in_flight() const;

 private:
  struct Job;
  struct Handles;  // the multi handle, the TLS session share, idle easy handles
  void Loop();
  void Start(std::unique_ptr<Job> job);
  void Complete(std::unique_ptr<Job> job, Result<HttpResponse> result);
  // Runs the timers that are due; returns how long until the next (or `idle`).
  std::chrono::milliseconds RunDueTimers(std::chrono::milliseconds idle);

  struct Timer {
    std::chrono::steady_clock::time_point due;
    uint64_t seq = 0;  // ties run in the order they were set
    std::function<void()> fn;
    bool operator>(const Timer& o) const { return due != o.due ? due > o.due : seq > o.seq; }
  };

  CurlTransportOptions options_;
  std::unique_ptr<Handles> handles_;  // touched only by the loop thread after construction
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Job>> incoming_;  // guarded by mu_
  bool stopping_ = false;                       // guarded by mu_
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_;  // guarded by mu_
  uint64_t timer_seq_ = 0;                      // guarded by mu_
  int in_flight_ = 0;                           // guarded by mu_
  int peak_in_flight_ = 0;                      // guarded by mu_
  std::atomic<int64_t> next_request_id_{1};
  std::atomic<int64_t> connections_opened_{0};
  std::thread thread_;
};

}  // namespace tpu::http
