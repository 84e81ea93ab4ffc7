// Change windows: see change_windows.h.
#include "base/change_windows.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>

namespace tpu {
namespace {

constexpr int64_t kHorizonSeconds = 60 * 24 * 3600;

}  // namespace

Result<int64_t> ParseRfc3339(const std::string& text) {
  int y, mo, d, h, mi, s, n = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) != 6 || n != 19)
    return Status::InvalidArgument("\"" + text + "\": expected RFC 3339, e.g. 2026-12-24T18:00:00Z");
  std::string rest = text.substr(19);
  if (!rest.empty() && rest[0] == '.') {  // fractional seconds: ignored
    size_t i = 1;
    while (i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i]))) ++i;
    rest = rest.substr(i);
  }
  int64_t offset = 0;
  if (rest == "Z" || rest == "z") {
    offset = 0;
  } else if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':') {
    int oh, om;
    if (std::sscanf(rest.c_str() + 1, "%2d:%2d", &oh, &om) != 2)
      return Status::InvalidArgument("\"" + text + "\": bad offset");
    offset = (oh * 3600 + om * 60) * (rest[0] == '-' ? -1 : 1);
  } else {
    return Status::InvalidArgument("\"" + text + "\": expected a Z or ±hh:mm offset");
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
    return Status::InvalidArgument("\"" + text + "\": date or time out of range");
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return static_cast<int64_t>(timegm(&tm)) - offset;
}

std::string FormatRfc3339(int64_t utc) {
  std::time_t t = static_cast<std::time_t>(utc);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Result<ChangeWindows> ChangeWindows::Compile(const std::vector<WindowSpec>& specs, const std::string& zoneinfo) {
  ChangeWindows out;
  for (size_t i = 0; i < specs.size(); ++i) {
    const WindowSpec& s = specs[i];
    const std::string at = "changeWindows[" + std::to_string(i) + "]: ";
    Window w;
    w.spec = s;
    if (!s.schedule.empty()) {
      auto cron = CronSchedule::Parse(s.schedule);
      if (!cron.ok()) return Status::InvalidArgument(at + "schedule: " + cron.status().message());
      w.cron = *cron;
      if (s.duration_seconds < 60 || s.duration_seconds > kMaxDurationSeconds)
        return Status::InvalidArgument(at + "duration: expected between 1m and 744h with a schedule");
      auto zone = TimeZone::Load(s.time_zone.empty() ? "UTC" : s.time_zone, zoneinfo);
      if (!zone.ok()) return Status::InvalidArgument(at + "timeZone: " + zone.status().message());
      w.zone = *zone;
    } else {
      auto start = ParseRfc3339(s.start);
      if (!start.ok()) return Status::InvalidArgument(at + "start: " + start.status().message());
      auto end = ParseRfc3339(s.end);
      if (!end.ok()) return Status::InvalidArgument(at + "end: " + end.status().message());
      if (*end <= *start) return Status::InvalidArgument(at + "end: expected after start");
      w.start = *start;
      w.end = *end;
    }
    out.windows_.push_back(std::move(w));
  }
  return out;
}

std::string ChangeWindows::Window::Describe(size_t index) const {
  std::string s = std::string(spec.allow ? "allow" : "deny") + " window " + std::to_string(index) + " (";
  if (cron) {
    s += spec.schedule + " for " + std::to_string(spec.duration_seconds / 60) + "m, " + zone.name();
  } else {
    s += spec.start + " to " + spec.end;
  }
  return s + ")";
}

std::optional<int64_t> ChangeWindows::OpenUntil(const Window& w, int64_t t) const {
  if (!w.cron) {
    if (t >= w.start && t < w.end) return w.end;
    return std::nullopt;
  }
  // The latest minute at or before t (within the duration) the schedule fires at.
  const int64_t minute = t - ((t % 60) + 60) % 60;
  for (int64_t m = minute; m > t - w.spec.duration_seconds; m -= 60)
    if (w.cron->Matches(CivilAt(m, w.zone.OffsetAt(m)))) return m + w.spec.duration_seconds;
  return std::nullopt;
}

std::optional<int64_t> ChangeWindows::NextStart(const Window& w, int64_t t, int64_t horizon) const {
  if (!w.cron) {
    if (w.start > t) return w.start;
    return std::nullopt;
  }
  const int64_t first = t - ((t % 60) + 60) % 60 + 60;
  int checked_day = -1;  // month * 32 + day whose day_can is known
  bool day_can = false;
  for (int64_t m = first; m <= t + horizon;) {
    CivilMinute c = CivilAt(m, w.zone.OffsetAt(m));
    if (w.cron->Matches(c)) return m;
    // A day that cannot match is skipped whole; whether it can is asked once a day.
    if (checked_day != c.month * 32 + c.day) {
      checked_day = c.month * 32 + c.day;
      CivilMinute probe = c;
      day_can = false;
      for (int h = 0; h < 24 && !day_can; ++h)
        for (int mm = 0; mm < 60 && !day_can; ++mm) {
          probe.hour = h;
          probe.minute = mm;
          day_can = w.cron->Matches(probe);
        }
    }
    m += day_can ? 60 : (24 * 60 - c.hour * 60 - c.minute) * 60;
  }
  return std::nullopt;
}

ChangeWindows::Decision ChangeWindows::At(int64_t now) const {
  Decision d;
  if (windows_.empty()) return d;
  int64_t t = now;
  bool any_allow = std::any_of(windows_.begin(), windows_.end(), [](const Window& w) { return w.spec.allow; });
  // Walk forward: past every deny window open at t, to the next allow window
  // when none is open, until both hold at once.
  for (int step = 0; step < 64; ++step) {
    std::optional<int64_t> deny_end;
    std::string deny_why;
    for (size_t i = 0; i < windows_.size(); ++i) {
      if (windows_[i].spec.allow) continue;
      if (auto end = OpenUntil(windows_[i], t); end && (!deny_end || *end > *deny_end)) {
        deny_end = end;
        deny_why = windows_[i].Describe(i);
      }
    }
    if (deny_end) {
      if (d.why.empty()) d.why = deny_why;
      d.open = false;
      t = *deny_end;
      continue;
    }
    if (!any_allow) break;
    bool allowed = false;
    for (const auto& w : windows_)
      if (w.spec.allow && OpenUntil(w, t)) allowed = true;
    if (allowed) break;
    if (d.why.empty()) d.why = "outside every allow window";
    d.open = false;
    std::optional<int64_t> next;
    for (const auto& w : windows_)
      if (w.spec.allow)
        if (auto s = NextStart(w, t, kHorizonSeconds - (t - now)); s && (!next || *s < *next)) next = s;
    if (!next) return d;  // opens_at unknown
    t = *next;
  }
  if (!d.open) d.opens_at = t;
  return d;
}

}  // namespace tpu
