// Five-field cron schedules: see cron_schedule.h.
#include "base/cron_schedule.h"

#include <charconv>
#include <ctime>
#include <vector>

namespace tpu {
namespace {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

bool Number(std::string_view s, int* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// One field into `bits` (indexes lo..hi); "" on success, else what was wrong.
template <size_t N>
std::string Field(std::string_view text, int lo, int hi, std::bitset<N>* bits, bool* star) {
  *star = text == "*";
  for (std::string_view part : Split(text, ',')) {
    int step = 1;
    if (size_t slash = part.find('/'); slash != std::string_view::npos) {
      if (!Number(part.substr(slash + 1), &step) || step < 1) return "step \"" + std::string(part) + "\"";
      part = part.substr(0, slash);
    }
    int a = lo, b = hi;
    if (part != "*") {
      size_t dash = part.find('-');
      if (dash == std::string_view::npos) {
        if (!Number(part, &a)) return "\"" + std::string(part) + "\"";
        b = step > 1 ? hi : a;
      } else if (!Number(part.substr(0, dash), &a) || !Number(part.substr(dash + 1), &b)) {
        return "range \"" + std::string(part) + "\"";
      }
    }
    if (a < lo || b > hi || a > b)
      return "\"" + std::string(part) + "\" (expected " + std::to_string(lo) + "–" + std::to_string(hi) + ")";
    for (int v = a; v <= b; v += step) bits->set(static_cast<size_t>(v));
  }
  return "";
}

}  // namespace

Result<CronSchedule> CronSchedule::Parse(std::string_view text) {
  std::vector<std::string_view> fields;
  for (std::string_view f : Split(text, ' '))
    if (!f.empty()) fields.push_back(f);
  if (fields.size() != 5)
    return Status::InvalidArgument("expected 5 cron fields (minute hour day-of-month month day-of-week), got " +
                                   std::to_string(fields.size()));
  CronSchedule c;
  bool star = false;
  static const char* kNames[] = {"minute", "hour", "day-of-month", "month", "day-of-week"};
  std::string why[5] = {
      Field(fields[0], 0, 59, &c.minutes_, &star), Field(fields[1], 0, 23, &c.hours_, &star),
      Field(fields[2], 1, 31, &c.days_, &c.days_star_), Field(fields[3], 1, 12, &c.months_, &star),
      Field(fields[4], 0, 7, &c.weekdays_, &c.weekdays_star_)};
  for (int i = 0; i < 5; ++i)
    if (!why[i].empty()) return Status::InvalidArgument(std::string("cron ") + kNames[i] + ": invalid " + why[i]);
  if (c.weekdays_[7]) c.weekdays_.set(0);  // 7 is Sunday too
  return c;
}

bool CronSchedule::Matches(const CivilMinute& t) const {
  if (!minutes_[t.minute] || !hours_[t.hour] || !months_[t.month]) return false;
  const bool day = days_[t.day], weekday = weekdays_[t.weekday];
  if (days_star_ || weekdays_star_) return day && weekday;
  return day || weekday;
}

CivilMinute CivilAt(int64_t utc, int64_t offset) {
  std::time_t local = static_cast<std::time_t>(utc + offset);
  std::tm tm{};
  gmtime_r(&local, &tm);
  return {tm.tm_min, tm.tm_hour, tm.tm_mday, tm.tm_mon + 1, tm.tm_wday};
}

}  // namespace tpu
