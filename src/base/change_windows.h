// Change windows: when a target's mutating actions may run (Argo CD's sync
// windows). A window is `allow` or `deny`, and either a cron schedule in a
// time zone that opens it for a duration, or a fixed [start, end) range.
// Deny wins: an action may run when no deny window is open and, if any allow
// windows exist, one of them is open. Plans run regardless; only applying
// waits.
//
// Pure: the caller passes the time (UTC seconds), so tests use a fake clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/cron_schedule.h"
#include "base/status.h"
#include "base/time_zone.h"

namespace tpu {

struct WindowSpec {
  bool allow = true;
  std::string schedule;  // cron; empty for a range
  int64_t duration_seconds = 0;
  std::string time_zone = "UTC";
  std::string start, end;  // RFC 3339
};

// "2026-11-24T01:00:00Z", "2026-11-24T02:00:00+01:00" → seconds since the
// epoch; InvalidArgument otherwise.
Result<int64_t> ParseRfc3339(const std::string& text);
std::string FormatRfc3339(int64_t utc);

class ChangeWindows {
 public:
  // The longest a cron window may stay open, so finding whether one is open
  // looks back a bounded number of minutes.
  static constexpr int64_t kMaxDurationSeconds = 31 * 24 * 3600;

  // InvalidArgument naming what is wrong with which window (0-based index).
  static Result<ChangeWindows> Compile(const std::vector<WindowSpec>& specs,
                                       const std::string& zoneinfo = "/usr/share/zoneinfo");

  bool empty() const { return windows_.empty(); }

  struct Decision {
    bool open = true;
    // When closed: when it opens (nullopt when not within the next 60 days),
    // and which window holds it ("deny window 0 (0 18 * * 5, 64h, Europe/Paris)").
    std::optional<int64_t> opens_at;
    std::string why;
  };
  Decision At(int64_t now) const;

 private:
  struct Window {
    WindowSpec spec;
    std::optional<CronSchedule> cron;
    TimeZone zone;
    int64_t start = 0, end = 0;  // range windows
    std::string Describe(size_t index) const;
  };
  // The end of window `w`'s occurrence open at `t`, or nullopt when closed.
  std::optional<int64_t> OpenUntil(const Window& w, int64_t t) const;
  // The start of `w`'s first occurrence after `t` (within `horizon` seconds).
  std::optional<int64_t> NextStart(const Window& w, int64_t t, int64_t horizon) const;

  std::vector<Window> windows_;
};

}  // namespace tpu
