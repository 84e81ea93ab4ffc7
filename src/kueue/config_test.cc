// spec.kueue parsing: defaults, every field, and exact error messages.
#include "kueue/config.h"

#include <gtest/gtest.h>

namespace tpu::kueue {
namespace {

TEST(KueueConfigTest, DefaultsAndFields) {
  auto c = ParseKueueConfig(nlohmann::json::parse(R"({"clusterQueue":"tpu"})"));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->mode, QuotaMode::kDeclared);
  EXPECT_EQ(c->resource, "google.com/tpu");
  EXPECT_EQ(c->scale_down_timeout, std::chrono::seconds(3600));
  auto full = ParseKueueConfig(nlohmann::json::parse(R"({"cohort":"all-tpus","mode":"ready",
      "flavorName":"{generation}-{topology}","apiVersion":"v1beta1",
      "scaleDown":{"stopPolicy":"Hold","timeout":"1h30m"}})"));
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_TRUE(full->cohort_mode());
  EXPECT_EQ(full->mode, QuotaMode::kReady);
  EXPECT_EQ(full->hold, HoldPolicy::kHold);
  EXPECT_EQ(full->scale_down_timeout, std::chrono::seconds(5400));
  EXPECT_EQ(full->api_version, "v1beta1");
}

TEST(KueueConfigTest, Errors) {
  auto msg = [](const char* text) {
    return ParseKueueConfig(nlohmann::json::parse(text)).status().message();
  };
  EXPECT_EQ(msg(R"({})"), "spec.kueue: set exactly one of clusterQueue and cohort");
  EXPECT_EQ(msg(R"({"clusterQueue":"a","cohort":"b"})"), "spec.kueue: set exactly one of clusterQueue and cohort");
  EXPECT_EQ(msg(R"({"clusterQueue":"Tpu"})"), "spec.kueue.clusterQueue: expected a lower-case DNS name, got \"Tpu\"");
  EXPECT_EQ(msg(R"({"clusterQueue":"a","mode":"live"})"), "spec.kueue.mode: expected declared or ready, got \"live\"");
  EXPECT_EQ(msg(R"({"clusterQueue":"a","scaleDown":{"timeout":"10"}})"),
            "spec.kueue.scaleDown.timeout: expected a duration such as 30m or 1h");
  EXPECT_EQ(msg(R"({"clusterQueue":"a","flavorName":"{accelerator}"})"),
            "spec.kueue.flavorName: must contain {topology}, or two shapes would share a flavor");
  EXPECT_EQ(msg(R"({"clusterQueue":"a","queue":"x"})"), "spec.kueue.queue: unknown field");
}

TEST(KueueConfigTest, FromTheLoadersPolicy) {
  manifest::KueuePolicy p;
  p.cohort = "all-tpus";
  p.wait_for_workloads = false;
  p.hold_queue = true;
  KueueConfig c = KueueConfigFromPolicy(p);
  EXPECT_EQ(c.queue_name(), "all-tpus");
  EXPECT_EQ(c.hold, HoldPolicy::kHold);
  EXPECT_EQ(c.scale_down_timeout, std::chrono::seconds(0));
  EXPECT_EQ(c.mode, QuotaMode::kDeclared);

  manifest::KueuePolicy ready;
  ready.cluster_queue = "tpu-queue";
  ready.ready_mode = true;
  ready.flavor_name = "{generation}-{topology}";
  ready.scale_down_timeout = "1m30s";
  KueueConfig r = KueueConfigFromPolicy(ready);
  EXPECT_EQ(r.mode, QuotaMode::kReady);
  EXPECT_EQ(r.flavor_name, "{generation}-{topology}");
  EXPECT_EQ(r.scale_down_timeout, std::chrono::seconds(90));
  EXPECT_EQ(r.hold, HoldPolicy::kNone);
}

}  // namespace
}  // namespace tpu::kueue
