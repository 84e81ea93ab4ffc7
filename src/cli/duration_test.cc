#include "cli/duration.h"

#include <gtest/gtest.h>

namespace tpu::cli {
namespace {

using std::chrono::milliseconds;

TEST(DurationTest, ParsesUnitsAndCombinations) {
  EXPECT_EQ(*ParseDuration("90s"), milliseconds(90'000));
  EXPECT_EQ(*ParseDuration("5m"), milliseconds(300'000));
  EXPECT_EQ(*ParseDuration("1h30m"), milliseconds(5'400'000));
  EXPECT_EQ(*ParseDuration("250ms"), milliseconds(250));
  EXPECT_EQ(*ParseDuration("60"), milliseconds(60'000));  // bare seconds
}

TEST(DurationTest, RejectsWhatItCannotRead) {
  for (const char* bad : {"", "5x", "-1s", "m", "1.5s", "5m3"}) {
    auto d = ParseDuration(bad);
    EXPECT_FALSE(d.ok()) << bad;
    if (!d.ok()) {
      EXPECT_NE(d.status().message().find("duration"), std::string::npos);
    }
  }
}

TEST(DurationTest, FormatsTheShortestSpelling) {
  EXPECT_EQ(FormatDuration(milliseconds(300'000)), "5m");
  EXPECT_EQ(FormatDuration(milliseconds(5'400'000)), "1h30m");
  EXPECT_EQ(FormatDuration(milliseconds(250)), "250ms");
  EXPECT_EQ(FormatDuration(milliseconds(0)), "0s");
  for (const char* s : {"5m", "1h30m", "250ms", "45s"}) EXPECT_EQ(FormatDuration(*ParseDuration(s)), s);
}

}  // namespace
}  // namespace tpu::cli
