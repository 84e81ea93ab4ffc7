// CurlTransport against a loopback server: headers, User-Agent, connection
// reuse, timeouts, the plain-http rule, and what debug logs may contain.
#include "http/curl_transport.h"

#include <condition_variable>
#include <thread>

#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "base/version.h"
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

CurlTransportOptions Options(std::chrono::milliseconds connect, std::chrono::milliseconds total, bool insecure = false) {
  CurlTransportOptions o;
  o.connect_timeout = connect;
  o.total_timeout = total;
  o.insecure = insecure;
  return o;
}

TEST(CurlTransportTest, SendsUserAgentAndReturnsStatusHeadersBody) {
  TestServer srv;
  srv.server().Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
    res.status = 201;
    res.set_header("X-Request-Thing", "yes");
    res.set_content("got:" + req.body, "text/plain");
  });
  CurlTransport t;
  HttpRequest req;
  req.method = "POST";
  req.url = srv.url() + "echo";
  req.headers = {{"Content-Type", "application/json"}};
  req.body = R"({"a":1})";
  auto res = t.Send(req);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 201);
  EXPECT_EQ(res->body, R"(got:{"a":1})");
  EXPECT_EQ(res->Header("x-request-thing"), "yes");
  EXPECT_EQ(res->Header("X-REQUEST-THING"), "yes");
  auto seen = srv.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(httplib::detail::get_header_value(seen[0].headers, "User-Agent", 0, ""),
            std::string("tpu-provisioner/") + TPU_PROVISIONER_VERSION);
}

TEST(CurlTransportTest, ErrorStatusesAreResponsesNotTransportFailures) {
  TestServer srv;
  srv.server().Get("/busy", [](const httplib::Request&, httplib::Response& res) {
    res.status = 503;
    res.set_header("Retry-After", "7");
    res.set_content("{}", "application/json");
  });
  CurlTransport t;
  auto res = t.Send(Get(srv.url() + "busy"));
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->Header("retry-after"), "7");
}

TEST(CurlTransportTest, SequentialCallsReuseOneConnection) {
  TestServer srv;
  srv.server().Get("/x", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
  CurlTransport t;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(t.Send(Get(srv.url() + "x")).ok());
  auto seen = srv.requests();
  ASSERT_EQ(seen.size(), 10u);
  for (const auto& r : seen) EXPECT_EQ(r.remote_port, seen[0].remote_port);
  EXPECT_EQ(t.connections_opened(), 1);
}

TEST(CurlTransportTest, SmallPoolOfThreadsUsesFewConnections) {
  TestServer srv;
  srv.server().Get("/x", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
  CurlTransport t;
  constexpr int kThreads = 4, kCalls = 25;
  std::atomic<int> ok{0};
  {
    std::vector<std::jthread> pool;
    for (int i = 0; i < kThreads; ++i) {
      pool.emplace_back([&] {
        for (int c = 0; c < kCalls; ++c) ok += t.Send(Get(srv.url() + "x")).ok();
      });
    }
  }
  EXPECT_EQ(ok, kThreads * kCalls);
  // At most one connection per concurrently busy handle.
  EXPECT_LE(t.connections_opened(), kThreads);
  std::set<int> ports;
  for (const auto& r : srv.requests()) ports.insert(r.remote_port);
  EXPECT_LE(ports.size(), static_cast<size_t>(kThreads));
}

TEST(CurlTransportTest, TotalTimeoutIsDeadlineExceeded) {
  TestServer srv;
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  srv.server().Get("/slow", [&](const httplib::Request&, httplib::Response& res) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return release; });
    res.set_content("late", "text/plain");
  });
  CurlTransport t(Options(std::chrono::milliseconds(10000), std::chrono::milliseconds(200)));
  auto res = t.Send(Get(srv.url() + "slow"));
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), Status::Code::kDeadlineExceeded) << res.status().ToString();
}

TEST(CurlTransportTest, PerRequestTimeoutOverridesDefault) {
  TestServer srv;
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  srv.server().Get("/slow", [&](const httplib::Request&, httplib::Response& res) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return release; });
  });
  CurlTransport t;  // default 60 s
  auto res = t.Send(Get(srv.url() + "slow", std::chrono::milliseconds(150)));
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), Status::Code::kDeadlineExceeded);
}

TEST(CurlTransportTest, RefusedConnectionIsUnavailable) {
  int port;
  {
    TestServer srv;  // take a free port, then close it
    port = srv.port();
  }
  CurlTransport t;
  auto res = t.Send(Get("http://127.0.0.1:" + std::to_string(port) + "/"));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), Status::Code::kUnavailable) << res.status().ToString();
}

TEST(CurlTransportTest, ConnectTimeoutToBlackholeFails) {
  // 192.0.2.0/24 (TEST-NET-1) is never routed: the connect either times out or
  // is refused by the local stack, depending on the sandbox.
  CurlTransport t(Options(std::chrono::milliseconds(100), std::chrono::milliseconds(1000), /*insecure=*/true));
  auto res = t.Send(Get("http://192.0.2.1:81/"));
  ASSERT_FALSE(res.ok());
  EXPECT_TRUE(res.status().code() == Status::Code::kDeadlineExceeded ||
              res.status().code() == Status::Code::kUnavailable)
      << res.status().ToString();
}

TEST(CurlTransportTest, PlainHttpToRemoteHostIsRefusedWithoutNetworkIO) {
  CurlTransport t;
  auto res = t.Send(Get("http://container.googleapis.com/v1/projects/p/locations/-/clusters"));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(res.status().message().find("refusing plain http"), std::string::npos);
  auto ftp = t.Send(Get("ftp://127.0.0.1/"));
  EXPECT_EQ(ftp.status().code(), Status::Code::kInvalidArgument);
}

TEST(CurlTransportTest, PlainHttpAllowedHosts) {
  EXPECT_TRUE(IsPlainHttpAllowedHost("127.0.0.1"));
  EXPECT_TRUE(IsPlainHttpAllowedHost("127.8.9.10"));
  EXPECT_TRUE(IsPlainHttpAllowedHost("localhost"));
  EXPECT_TRUE(IsPlainHttpAllowedHost("LOCALHOST"));
  EXPECT_TRUE(IsPlainHttpAllowedHost("::1"));
  EXPECT_TRUE(IsPlainHttpAllowedHost("169.254.169.254"));
  EXPECT_TRUE(IsPlainHttpAllowedHost("metadata.google.internal"));
  EXPECT_FALSE(IsPlainHttpAllowedHost("container.googleapis.com"));
  EXPECT_FALSE(IsPlainHttpAllowedHost("10.0.0.1"));
  EXPECT_FALSE(IsPlainHttpAllowedHost("127.0.0.1.evil.com"));
  EXPECT_FALSE(IsPlainHttpAllowedHost("localhost.evil.com"));
  EXPECT_EQ(UrlHost("http://127.0.0.1:8080/x"), "127.0.0.1");
  EXPECT_EQ(UrlHost("http://[::1]:8080/x"), "::1");
  EXPECT_EQ(UrlHost("http://user@127.0.0.1.evil.com/x"), "127.0.0.1.evil.com");
  EXPECT_EQ(UrlHost("https://Compute.GoogleApis.com"), "compute.googleapis.com");
}

TEST(CurlTransportTest, DebugLogsCarryRequestIdButNeverBodiesOrTokens) {
  TestServer srv;
  srv.server().Post("/t", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"access_token":"RESPONSE-SECRET"})", "application/json");
  });
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>("capture", sink);
  logger->set_level(spdlog::level::debug);
  spdlog::set_default_logger(logger);
  {
    CurlTransport t;
    HttpRequest req = Get(srv.url() + "t");
    req.method = "POST";
    req.headers = {{"Authorization", "Bearer TOKEN-SECRET"}};
    req.body = "BODY-SECRET";
    ASSERT_TRUE(t.Send(req).ok());
  }
  spdlog::set_default_logger(previous);
  auto lines = sink->last_formatted();
  ASSERT_FALSE(lines.empty());
  bool saw_id = false;
  for (const auto& line : lines) {
    EXPECT_EQ(line.find("SECRET"), std::string::npos) << line;
    if (line.find("http #") != std::string::npos) saw_id = true;
  }
  EXPECT_TRUE(saw_id);
}

}  // namespace
}  // namespace tpu::http
