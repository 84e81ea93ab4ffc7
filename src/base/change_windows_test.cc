// Change windows against a fake clock (explicit instants): cron schedules in
// time zones across a DST change, ranges, deny over allow, and when a closed
// window opens.
#include "base/change_windows.h"

#include <gtest/gtest.h>

namespace tpu {
namespace {

int64_t At(const std::string& rfc3339) { return ParseRfc3339(rfc3339).value(); }

ChangeWindows Compile(std::vector<WindowSpec> specs) {
  auto w = ChangeWindows::Compile(specs);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return *w;
}

TEST(CronScheduleTest, FieldsRangesStepsAndDays) {
  auto c = CronSchedule::Parse("*/15 9-17 * * 1-5");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->Matches({30, 9, 24, 11, 2}));    // Tuesday 09:30
  EXPECT_FALSE(c->Matches({31, 9, 24, 11, 2}));
  EXPECT_FALSE(c->Matches({0, 18, 24, 11, 2}));
  EXPECT_FALSE(c->Matches({0, 10, 29, 11, 6}));   // Saturday
  auto sunday = CronSchedule::Parse("0 0 * * 7");
  ASSERT_TRUE(sunday.ok());
  EXPECT_TRUE(sunday->Matches({0, 0, 29, 11, 0}));
  // Both day fields restricted: either matches, as in cron.
  auto either = CronSchedule::Parse("0 0 1 * 5");
  ASSERT_TRUE(either.ok());
  EXPECT_TRUE(either->Matches({0, 0, 1, 12, 2}));
  EXPECT_TRUE(either->Matches({0, 0, 27, 11, 5}));
  EXPECT_FALSE(either->Matches({0, 0, 2, 12, 3}));
}

TEST(CronScheduleTest, ErrorsSayWhichField) {
  EXPECT_EQ(CronSchedule::Parse("0 24 * * *").status().message(), "cron hour: invalid \"24\" (expected 0–23)");
  EXPECT_EQ(CronSchedule::Parse("0 0 * *").status().message(),
            "expected 5 cron fields (minute hour day-of-month month day-of-week), got 4");
  EXPECT_EQ(CronSchedule::Parse("x 0 * * *").status().message(), "cron minute: invalid \"x\"");
}

TEST(TimeZoneTest, OffsetsFollowDaylightSaving) {
  auto paris = TimeZone::Load("Europe/Paris");
  ASSERT_TRUE(paris.ok()) << paris.status().ToString();
  EXPECT_EQ(paris->OffsetAt(At("2026-01-15T12:00:00Z")), 3600);
  EXPECT_EQ(paris->OffsetAt(At("2026-07-15T12:00:00Z")), 7200);
  EXPECT_EQ(paris->OffsetAt(At("2026-03-29T00:59:59Z")), 3600);  // the change: 01:00 UTC
  EXPECT_EQ(paris->OffsetAt(At("2026-03-29T01:00:00Z")), 7200);
  EXPECT_EQ(TimeZone::Load("Mars/Olympus").status().code(), Status::Code::kNotFound);
  EXPECT_FALSE(TimeZone::Load("../../etc/passwd").ok());
}

TEST(ChangeWindowsTest, DenyWindowInItsTimeZone) {
  // Friday 18:00 in Paris, for 64 hours: the weekend freeze.
  ChangeWindows w = Compile({{false, "0 18 * * 5", 64 * 3600, "Europe/Paris", "", ""}});
  EXPECT_TRUE(w.At(At("2026-11-27T16:59:00Z")).open);  // 17:59 in Paris (UTC+1)
  auto closed = w.At(At("2026-11-27T17:00:00Z"));
  EXPECT_FALSE(closed.open);
  ASSERT_TRUE(closed.opens_at);
  EXPECT_EQ(FormatRfc3339(*closed.opens_at), "2026-11-30T09:00:00Z");  // Monday 10:00 in Paris
  EXPECT_EQ(closed.why, "deny window 0 (0 18 * * 5 for 3840m, Europe/Paris)");
  EXPECT_FALSE(w.At(At("2026-11-30T08:59:59Z")).open);
  EXPECT_TRUE(w.At(At("2026-11-30T09:00:00Z")).open);
  // In summer the same wall-clock schedule is an hour earlier in UTC.
  EXPECT_FALSE(w.At(At("2026-07-03T16:00:00Z")).open);
  EXPECT_TRUE(w.At(At("2026-07-03T15:59:00Z")).open);
}

TEST(ChangeWindowsTest, AllowWindowsOnlyAndDenyWins) {
  // Weekdays 09:00–17:00 UTC, except a fixed freeze.
  ChangeWindows w = Compile({{true, "0 9 * * 1-5", 8 * 3600, "UTC", "", ""},
                             {false, "", 0, "", "2026-11-25T10:00:00Z", "2026-11-25T12:30:00Z"}});
  EXPECT_TRUE(w.At(At("2026-11-24T09:00:00Z")).open);
  auto night = w.At(At("2026-11-24T20:00:00Z"));
  EXPECT_FALSE(night.open);
  EXPECT_EQ(night.why, "outside every allow window");
  EXPECT_EQ(FormatRfc3339(*night.opens_at), "2026-11-25T09:00:00Z");
  auto freeze = w.At(At("2026-11-25T11:00:00Z"));
  EXPECT_FALSE(freeze.open);
  EXPECT_EQ(FormatRfc3339(*freeze.opens_at), "2026-11-25T12:30:00Z");
  // Saturday: the next allow window is Monday.
  EXPECT_EQ(FormatRfc3339(*w.At(At("2026-11-28T12:00:00Z")).opens_at), "2026-11-30T09:00:00Z");
}

TEST(ChangeWindowsTest, BadWindowsAreErrors) {
  EXPECT_EQ(ChangeWindows::Compile({{false, "0 18 * * 5", 30, "UTC", "", ""}}).status().message(),
            "changeWindows[0]: duration: expected between 1m and 744h with a schedule");
  EXPECT_EQ(ChangeWindows::Compile({{false, "", 0, "", "2026-11-25T10:00:00Z", "2026-11-25T09:00:00Z"}})
                .status()
                .message(),
            "changeWindows[0]: end: expected after start");
  EXPECT_FALSE(ChangeWindows::Compile({{true, "0 9 * * *", 3600, "Nowhere/City", "", ""}}).ok());
  EXPECT_EQ(ParseRfc3339("2026-11-25T10:00:00+01:00").value(), At("2026-11-25T09:00:00Z"));
  EXPECT_FALSE(ParseRfc3339("2026-11-25 10:00").ok());
}

}  // namespace
}  // namespace tpu
