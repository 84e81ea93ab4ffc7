#include "daemon/target_backoff.h"

#include <gtest/gtest.h>

namespace tpu::daemon {
namespace {

using namespace std::chrono_literals;

TEST(TargetBackoffTest, DoublesPerTargetUpToTheCap) {
  TargetBackoff b({10s, 60s, 120s, 600s});
  TimePoint t0{};
  EXPECT_EQ(b.Failed("p/a", t0, false), 10s);
  EXPECT_EQ(b.Failed("p/a", t0, false), 20s);
  EXPECT_EQ(b.Failed("p/a", t0, false), 40s);
  EXPECT_EQ(b.Failed("p/a", t0, false), 60s);
  EXPECT_EQ(b.Failed("p/a", t0, false), 60s);
  EXPECT_EQ(b.failures("p/a"), 5);
  // Another target is unaffected.
  EXPECT_TRUE(b.Ready("p/b", t0));
  EXPECT_EQ(b.failures("p/b"), 0);
  EXPECT_FALSE(b.Ready("p/a", t0 + 59s));
  EXPECT_TRUE(b.Ready("p/a", t0 + 60s));
  EXPECT_TRUE(b.RetryDue("p/a", t0 + 60s));
  EXPECT_FALSE(b.RetryDue("p/b", t0 + 60s));
  b.Succeeded("p/a");
  EXPECT_EQ(b.failures("p/a"), 0);
  EXPECT_FALSE(b.NextRetry().has_value());
}

TEST(TargetBackoffTest, CapacityWaitsOnItsOwnSlowerClock) {
  TargetBackoff b({10s, 60s, 120s, 600s});
  TimePoint t0{};
  EXPECT_EQ(b.Failed("p/a", t0, true), 120s);
  EXPECT_EQ(b.Failed("p/a", t0, true), 240s);
  b.Failed("p/b", t0, false);
  EXPECT_EQ(*b.NextRetry(), t0 + 10s);
}

TEST(TargetBackoffTest, ManyFailuresNeverOverflow) {
  TargetBackoff b;
  TimePoint t0{};
  for (int i = 0; i < 100; ++i) b.Failed("p/a", t0, false);
  EXPECT_EQ(*b.RetryAt("p/a"), t0 + std::chrono::minutes(10));
}

}  // namespace
}  // namespace tpu::daemon
