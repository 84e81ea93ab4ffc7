// Kubernetes timestamp spellings (RFC 3339 in UTC, optionally microseconds).
#include "kube/timestamps.h"

#include <cstdio>
#include <ctime>

namespace tpu::kube {
namespace {

std::string Format(WallTime t, bool micro) {
  auto since = t.time_since_epoch();
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(since);
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(since - secs).count();
  std::time_t tt = secs.count();
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  if (micro) std::snprintf(buf + n, sizeof buf - n, ".%06lld", static_cast<long long>(us));
  return std::string(buf) + "Z";
}

}  // namespace

std::string FormatTime(WallTime t) { return Format(t, false); }
std::string FormatMicroTime(WallTime t) { return Format(t, true); }

bool ParseTime(const std::string& text, WallTime* out) {
  std::tm tm{};
  int fraction_start = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &fraction_start) != 6) {
    return false;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  long long micros = 0;
  const char* p = text.c_str() + fraction_start;
  if (*p == '.') {
    int digits = 0;
    for (++p; *p >= '0' && *p <= '9'; ++p) {
      if (digits < 6) micros = micros * 10 + (*p - '0'), ++digits;
    }
    while (digits++ < 6) micros *= 10;
  }
  if (*p != 'Z') return false;  // the API always writes UTC
  *out = WallTime(std::chrono::seconds(timegm(&tm))) + std::chrono::microseconds(micros);
  return true;
}

}  // namespace tpu::kube
