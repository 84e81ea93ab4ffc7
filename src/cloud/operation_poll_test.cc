// The poll and retry schedules the executor uses between calls.
#include "cloud/operation_poll.h"

#include <gtest/gtest.h>

namespace tpu::cloud {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr uint64_t kLow = 0;                 // Unit() = 0
constexpr uint64_t kHigh = ~uint64_t{0};     // Unit() → 1
constexpr uint64_t kMid = uint64_t{1} << 63; // Unit() = 0.5

TEST(PollScheduleTest, GrowsToTheCapWithJitterAroundIt) {
  PollSchedule s;
  EXPECT_EQ(s.Delay(0, kMid), milliseconds(100));
  EXPECT_EQ(s.Delay(1, kMid), milliseconds(150));
  EXPECT_EQ(s.Delay(2, kMid), milliseconds(225));
  EXPECT_EQ(s.Delay(50, kMid), milliseconds(15000));
  EXPECT_EQ(s.Delay(0, kLow), milliseconds(80));
  EXPECT_GE(s.Delay(0, kHigh), milliseconds(119));
  EXPECT_LE(s.Delay(0, kHigh), milliseconds(120));
}

TEST(PollScheduleTest, WithAnExpectedTimeWaitsForItThenStepsATenth) {
  PollSchedule s;
  // Before the expected time: until then, never longer than max.
  EXPECT_EQ(s.DelayExpecting(milliseconds(200), milliseconds(0), 0, kMid), milliseconds(200));
  EXPECT_EQ(s.DelayExpecting(milliseconds(200), milliseconds(150), 0, kMid), milliseconds(50));
  EXPECT_EQ(s.DelayExpecting(seconds(300), milliseconds(0), 0, kMid), milliseconds(15000));
  // At or after it: a tenth of it, ×1.5 per late poll, up to max.
  EXPECT_EQ(s.DelayExpecting(milliseconds(200), milliseconds(200), 0, kMid), milliseconds(20));
  EXPECT_EQ(s.DelayExpecting(milliseconds(200), milliseconds(220), 1, kMid), milliseconds(30));
  EXPECT_EQ(s.DelayExpecting(milliseconds(50), milliseconds(60), 0, kMid), milliseconds(10));  // min_step
  EXPECT_EQ(s.DelayExpecting(seconds(300), seconds(300), 0, kMid), milliseconds(15000));
}

TEST(OperationTimesTest, LearnsFromTheFirstOperationThenTracksTheDuration) {
  OperationTimes t;
  EXPECT_FALSE(t.Expected("gke CREATE_NODE_POOL"));
  // Seen running at 100 ms, done at 250 ms: somewhere between.
  t.Observe("gke CREATE_NODE_POOL", std::nullopt, milliseconds(100), milliseconds(250));
  EXPECT_EQ(t.Expected("gke CREATE_NODE_POOL"), milliseconds(175));
  // Polled at the expected time and still running until 215: halfway there.
  t.Observe("gke CREATE_NODE_POOL", milliseconds(175), milliseconds(195), milliseconds(215));
  EXPECT_EQ(t.Expected("gke CREATE_NODE_POOL"), milliseconds(190));
  // Done at the first poll: a little sooner next time.
  t.Observe("gke CREATE_NODE_POOL", milliseconds(190), milliseconds(0), milliseconds(190));
  EXPECT_EQ(t.Expected("gke CREATE_NODE_POOL"), milliseconds(186));
  // A wave of hits keeps it positive; operations of 210 ms, polled as the
  // schedule would (at the estimate, then a tenth of it later), bring it back
  // to about their duration.
  for (int i = 0; i < 500; ++i) t.Observe("gke CREATE_NODE_POOL", milliseconds(1), milliseconds(0), milliseconds(1));
  EXPECT_GE(t.Expected("gke CREATE_NODE_POOL")->count(), 1);
  for (int i = 0; i < 200; ++i) {
    milliseconds e = *t.Expected("gke CREATE_NODE_POOL");
    milliseconds at = e;
    milliseconds running(0);
    while (at < milliseconds(210)) {  // still running at `at`: next poll a step later
      running = at;
      at += std::max(e / 10, milliseconds(10));
    }
    t.Observe("gke CREATE_NODE_POOL", e, running, at);
  }
  EXPECT_GE(t.Expected("gke CREATE_NODE_POOL")->count(), 180);
  EXPECT_LE(t.Expected("gke CREATE_NODE_POOL")->count(), 240);
  EXPECT_FALSE(t.Expected("compute insert instanceTemplates"));  // kinds are learned apart
}

TEST(RetryScheduleTest, FullJitterUnderAnExponentialCeiling) {
  RetrySchedule s;
  ApiError e;
  e.http_status = 503;
  EXPECT_EQ(s.Delay(e, 0, kLow), milliseconds(0));
  EXPECT_EQ(s.Delay(e, 0, kMid), milliseconds(500));
  EXPECT_EQ(s.Delay(e, 3, kMid), milliseconds(4000));
  EXPECT_EQ(s.Delay(e, 40, kMid), milliseconds(30000));  // cap 60 s
}

TEST(RetryScheduleTest, NeverSoonerThanRetryAfter) {
  RetrySchedule s;
  ApiError e;
  e.http_status = 429;
  e.retry_after = seconds(20);
  EXPECT_EQ(s.Delay(e, 0, kMid), milliseconds(20000));
  EXPECT_EQ(s.Delay(e, 10, kHigh).count() >= 20000, true);
}

}  // namespace
}  // namespace tpu::cloud
