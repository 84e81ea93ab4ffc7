// A cron schedule in the five-field form of crontab(5): minute hour
// day-of-month month day-of-week, each `*`, a number, a range `a-b`, a step
// `*/n` or `a-b/n`, or a comma list of those; day-of-week 0–7 (0 and 7 are
// Sunday). As in cron, when both day fields are restricted a day matches
// either. Used by change windows, matched against local civil time.
#pragma once

#include <bitset>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tpu {

// Local civil time, as much as a schedule reads.
struct CivilMinute {
  int minute = 0;  // 0–59
  int hour = 0;    // 0–23
  int day = 1;     // 1–31
  int month = 1;   // 1–12
  int weekday = 0; // 0 Sunday … 6
};

class CronSchedule {
 public:
  // InvalidArgument saying which field and what was expected.
  static Result<CronSchedule> Parse(std::string_view text);
  bool Matches(const CivilMinute& t) const;

 private:
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_;
  std::bitset<13> months_;
  std::bitset<8> weekdays_;
  bool days_star_ = false, weekdays_star_ = false;
};

// Civil time of `utc` seconds at `offset` seconds east of UTC.
CivilMinute CivilAt(int64_t utc, int64_t offset);

}  // namespace tpu
