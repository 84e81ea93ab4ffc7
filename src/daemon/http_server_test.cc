#include "daemon/http_server.h"

#include <httplib.h>

#include <atomic>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace tpu::daemon {
namespace {

TEST(ListenAddressTest, ParsesHostAndPort) {
  std::string host;
  int port = 0;
  ASSERT_TRUE(ParseListenAddress("127.0.0.1:8080", &host, &port).ok());
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 8080);
  ASSERT_TRUE(ParseListenAddress(":9090", &host, &port).ok());
  EXPECT_EQ(host, "0.0.0.0");
  ASSERT_TRUE(ParseListenAddress("[::1]:80", &host, &port).ok());
  EXPECT_EQ(host, "::1");
  EXPECT_FALSE(ParseListenAddress("localhost", &host, &port).ok());
  EXPECT_FALSE(ParseListenAddress("h:99999", &host, &port).ok());
  EXPECT_FALSE(ParseListenAddress("h:x", &host, &port).ok());
}

TEST(HttpServerTest, ServesHealthReadinessStatusMetricsAndTheHook) {
  std::atomic<bool> ready{false};
  std::atomic<int> fetches{0};
  GitWebhook hook([&] { ++fetches; });
  hook.SetSecret("k");
  HttpHandlers h;
  h.status = [&] {
    DaemonStatus s;
    s.ready = ready;
    s.revision = "abc";
    TargetReport t;
    t.key = "p/c";
    t.state = TargetState::kBlocked;
    t.errors = {"deploy/p/c/a.yaml:3:5: spec.topology: bad"};
    t.declared_chips = 16;
    s.targets.push_back(t);
    return s;
  };
  h.extra_metrics = [] {
    ExtraMetrics m;
    m.api_calls["GET 200"] = 7;
    return m;
  };
  h.webhook = &hook;
  auto server = HttpServer::Start("127.0.0.1:0", h);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  httplib::Client c("127.0.0.1", (*server)->port());

  EXPECT_EQ(c.Get("/healthz")->status, 200);
  EXPECT_EQ(c.Get("/readyz")->status, 503);
  ready = true;
  EXPECT_EQ(c.Get("/readyz")->status, 200);

  auto status = nlohmann::json::parse(c.Get("/status")->body);
  EXPECT_EQ(status["revision"], "abc");
  EXPECT_EQ(status["targets"][0]["state"], "blocked");
  EXPECT_EQ(status["targets"][0]["errors"][0], "deploy/p/c/a.yaml:3:5: spec.topology: bad");
  EXPECT_EQ(status["targets"][0]["declaredChips"], 16);

  std::string metrics = c.Get("/metrics")->body;
  EXPECT_NE(metrics.find("tpu_provisioner_api_calls_total{method=\"GET\",code=\"200\"} 7\n"), std::string::npos);
  EXPECT_NE(metrics.find("tpu_provisioner_target_state{target=\"p/c\",state=\"blocked\"} 1\n"), std::string::npos);
  EXPECT_NE(metrics.find("tpu_provisioner_declared_chips{target=\"p/c\"} 16\n"), std::string::npos);
  EXPECT_NE(metrics.find("# TYPE tpu_provisioner_reconcile_duration_seconds histogram\n"), std::string::npos);

  EXPECT_EQ(c.Post("/hooks/git", "{}", "application/json")->status, 401);
  EXPECT_EQ(fetches, 0);
  (*server)->Stop();
}

TEST(MetricsTextTest, EscapesLabelValues) {
  EXPECT_EQ(EscapeLabel("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

}  // namespace
}  // namespace tpu::daemon
