// CurlMultiLoop against a loopback server: many requests in flight on its one
// thread, connection reuse, timeouts, a refused connection, cancellation, the
// plain-http rule, and shutdown with requests in flight.
#include "http/curl_multi.h"

#include <condition_variable>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "http/test_server.h"

namespace tpu::http {
namespace {

using testing::TestServer;

HttpRequest Get(const std::string& url, std::chrono::milliseconds timeout = std::chrono::milliseconds(0)) {
  HttpRequest r;
  r.url = url;
  r.timeout = timeout;
  return r;
}

// Holds every request at the server until Open() (or the destructor).
class Gate {
 public:
  ~Gate() { Open(); }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void Pass() {
    std::unique_lock<std::mutex> lock(mu_);
    ++waiting_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
  }
  // Blocks until `n` requests wait at the gate.
  void AwaitWaiting(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return waiting_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int waiting_ = 0;
  bool open_ = false;
};

// Collects answers delivered by `done` callbacks.
struct Answers {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Result<HttpResponse>> results;
  std::set<std::thread::id> threads;
  HttpTransport::Done Callback() {
    return [this](Result<HttpResponse> r) {
      std::lock_guard<std::mutex> lock(mu);
      results.push_back(std::move(r));
      threads.insert(std::this_thread::get_id());
      cv.notify_all();
    };
  }
  void AwaitCount(size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return results.size() >= n; });
  }
};

TEST(CurlMultiLoopTest, ManyRequestsInFlightAtOnceOnOneThread) {
  constexpr int kRequests = 48;  // under the per-host connection limit: all reach the server
  TestServer srv(kRequests + 4);
  Gate gate;
  srv.server().Get("/held", [&](const httplib::Request&, httplib::Response& res) {
    gate.Pass();
    res.set_content("ok", "text/plain");
  });
  CurlMultiLoop loop;
  Answers answers;
  for (int i = 0; i < kRequests; ++i) loop.Submit(Get(srv.url() + "held"), answers.Callback());
  // Every request is at the server at once, while the test thread made no call.
  gate.AwaitWaiting(kRequests);
  EXPECT_EQ(loop.in_flight(), kRequests);
  gate.Open();
  answers.AwaitCount(kRequests);
  for (const auto& r : answers.results) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "ok");
  }
  EXPECT_EQ(answers.threads.size(), 1u) << "every answer comes from the loop thread";
  EXPECT_EQ(answers.threads.count(std::this_thread::get_id()), 0u);
  EXPECT_EQ(loop.peak_in_flight(), kRequests);
  EXPECT_EQ(loop.in_flight(), 0);
  EXPECT_EQ(loop.connections_opened(), kRequests);

  // The connections are kept alive: a second wave opens none.
  Answers again;
  for (int i = 0; i < kRequests; ++i) loop.Submit(Get(srv.url() + "held"), again.Callback());
  again.AwaitCount(kRequests);
  EXPECT_EQ(loop.connections_opened(), kRequests);
}

TEST(CurlMultiLoopTest, SequentialCallsReuseOneConnection) {
  TestServer srv;
  srv.server().Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
    res.status = 201;
    res.set_header("X-Thing", "yes");
    res.set_content("got:" + req.body, "text/plain");
  });
  CurlMultiLoop loop;
  for (int i = 0; i < 10; ++i) {
    HttpRequest req;
    req.method = "POST";
    req.url = srv.url() + "echo";
    req.body = std::to_string(i);
    auto res = loop.Send(req);
    ASSERT_TRUE(res.ok()) << res.status().ToString();
    EXPECT_EQ(res->status, 201);
    EXPECT_EQ(res->body, "got:" + std::to_string(i));
    EXPECT_EQ(res->Header("x-thing"), "yes");
  }
  EXPECT_EQ(loop.connections_opened(), 1);
  std::set<int> ports;
  for (const auto& r : srv.requests()) ports.insert(r.remote_port);
  EXPECT_EQ(ports.size(), 1u);
}

TEST(CurlMultiLoopTest, TimeoutIsDeadlineExceededAndOthersGoOn) {
  TestServer srv(8);
  Gate gate;
  srv.server().Get("/slow", [&](const httplib::Request&, httplib::Response& res) {
    gate.Pass();
    res.set_content("late", "text/plain");
  });
  srv.server().Get("/fast", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
  CurlTransportOptions o;
  o.total_timeout = std::chrono::milliseconds(200);
  CurlMultiLoop loop(o);
  Answers slow;
  loop.Submit(Get(srv.url() + "slow"), slow.Callback());
  // The held request blocks neither the loop nor a request beside it.
  auto fast = loop.Send(Get(srv.url() + "fast", std::chrono::milliseconds(10'000)));
  ASSERT_TRUE(fast.ok()) << fast.status().ToString();
  EXPECT_EQ(fast->body, "ok");
  slow.AwaitCount(1);
  gate.Open();
  ASSERT_FALSE(slow.results[0].ok());
  EXPECT_EQ(slow.results[0].status().code(), Status::Code::kDeadlineExceeded)
      << slow.results[0].status().ToString();
}

TEST(CurlMultiLoopTest, RefusedConnectionIsUnavailable) {
  int port;
  {
    TestServer srv;  // take a free port, then close it
    port = srv.port();
  }
  CurlMultiLoop loop;
  auto res = loop.Send(Get("http://127.0.0.1:" + std::to_string(port) + "/"));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), Status::Code::kUnavailable) << res.status().ToString();
}

TEST(CurlMultiLoopTest, PlainHttpToRemoteHostIsRefused) {
  CurlMultiLoop loop;
  auto res = loop.Send(Get("http://container.googleapis.com/v1/projects/p/locations/-/clusters"));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(res.status().message().find("refusing plain http"), std::string::npos);
  EXPECT_EQ(loop.connections_opened(), 0);
}

TEST(CurlMultiLoopTest, CancelEndsARequestInFlight) {
  TestServer srv(4);
  Gate gate;
  srv.server().Get("/held", [&](const httplib::Request&, httplib::Response& res) {
    gate.Pass();
    res.set_content("late", "text/plain");
  });
  std::atomic<int> never_calls{0};
  srv.server().Get("/never", [&](const httplib::Request&, httplib::Response&) { ++never_calls; });
  CurlMultiLoop loop;
  CancelToken token;
  HttpRequest req = Get(srv.url() + "held");
  req.cancel = &token;
  Answers answers;
  loop.Submit(req, answers.Callback());
  gate.AwaitWaiting(1);
  token.Cancel();
  answers.AwaitCount(1);
  ASSERT_TRUE(answers.results[0].ok()) << answers.results[0].status().ToString();
  EXPECT_TRUE(answers.results[0]->cancelled);
  gate.Open();

  // A token cancelled before the call sends nothing.
  req.url = srv.url() + "never";
  auto again = loop.Send(req);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->cancelled);
  EXPECT_EQ(never_calls.load(), 0);
}

TEST(CurlMultiLoopTest, SendFromTheLoopThreadIsAnErrorNotADeadlock) {
  TestServer srv;
  srv.server().Get("/x", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
  CurlMultiLoop loop;
  Answers inner;
  loop.Submit(Get(srv.url() + "x"), [&](Result<HttpResponse>) { inner.Callback()(loop.Send(Get(srv.url() + "x"))); });
  inner.AwaitCount(1);
  ASSERT_FALSE(inner.results[0].ok());
  EXPECT_EQ(inner.results[0].status().code(), Status::Code::kInternal);
}

TEST(CurlMultiLoopTest, StoppingEndsRequestsInFlight) {
  TestServer srv(4);
  Gate gate;
  srv.server().Get("/held", [&](const httplib::Request&, httplib::Response&) { gate.Pass(); });
  Answers answers;
  {
    CurlMultiLoop loop;
    loop.Submit(Get(srv.url() + "held"), answers.Callback());
    gate.AwaitWaiting(1);
  }
  ASSERT_EQ(answers.results.size(), 1u);
  ASSERT_FALSE(answers.results[0].ok());
  EXPECT_EQ(answers.results[0].status().code(), Status::Code::kUnavailable);
  gate.Open();
}

}  // namespace
}  // namespace tpu::http
