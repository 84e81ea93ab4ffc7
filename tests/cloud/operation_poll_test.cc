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
  EXPECT_EQ(s.Delay(0, kMid), milliseconds(1000));
  EXPECT_EQ(s.Delay(1, kMid), milliseconds(1500));
  EXPECT_EQ(s.Delay(2, kMid), milliseconds(2250));
  EXPECT_EQ(s.Delay(50, kMid), milliseconds(15000));
  EXPECT_EQ(s.Delay(0, kLow), milliseconds(800));
  EXPECT_GE(s.Delay(0, kHigh), milliseconds(1199));
  EXPECT_LE(s.Delay(0, kHigh), milliseconds(1200));
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
