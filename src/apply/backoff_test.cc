// Backoff: full jitter under an exponential ceiling, Retry-After as a floor, a deadline.
#include "apply/backoff.h"

#include <set>

#include <gtest/gtest.h>

namespace tpu::apply {
namespace {

using std::chrono::milliseconds;

TEST(Backoff, DelaysStayUnderTheExponentialCeiling) {
  Backoff b({.base = milliseconds(100), .cap = milliseconds(1000), .deadline = milliseconds(60'000), .seed = 7});
  int64_t ceilings[] = {100, 200, 400, 800, 1000, 1000, 1000};
  for (int64_t c : ceilings) {
    auto d = b.Next();
    ASSERT_TRUE(d.has_value());
    EXPECT_LE(d->count(), c);
    EXPECT_GE(d->count(), 0);
  }
  EXPECT_EQ(b.attempts(), 7);
}

TEST(Backoff, JitterIsSpreadAndSeeded) {
  Backoff a({.base = milliseconds(1000), .cap = milliseconds(1000), .seed = 1});
  Backoff b({.base = milliseconds(1000), .cap = milliseconds(1000), .seed = 1});
  std::set<int64_t> distinct;
  for (int i = 0; i < 20; ++i) {
    auto x = a.Next(), y = b.Next();
    EXPECT_EQ(x, y);
    distinct.insert(x->count());
  }
  EXPECT_GT(distinct.size(), 10u);
}

TEST(Backoff, RetryAfterIsAFloor) {
  Backoff b({.base = milliseconds(10), .cap = milliseconds(10), .seed = 3});
  EXPECT_EQ(b.Next(milliseconds(5000)), milliseconds(5000));
}

TEST(Backoff, GivesUpAtTheDeadline) {
  Backoff b({.base = milliseconds(10), .cap = milliseconds(10), .deadline = milliseconds(0)});
  EXPECT_FALSE(b.Next().has_value());
}

TEST(Backoff, NeverWaitsPastTheDeadline) {
  Backoff b({.base = milliseconds(10), .cap = milliseconds(10), .deadline = milliseconds(50)});
  auto d = b.Next(milliseconds(60'000));
  ASSERT_TRUE(d.has_value());
  EXPECT_LE(d->count(), 50);
}

}  // namespace
}  // namespace tpu::apply
