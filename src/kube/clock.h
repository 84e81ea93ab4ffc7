// Wall-clock time, injected so that lease expiry and scale-down timeouts can
// be tested with a fake clock.
#pragma once

#include <chrono>
#include <string>

namespace tpu::kube {

class Clock {
 public:
  using TimePoint = std::chrono::system_clock::time_point;
  virtual ~Clock() = default;
  virtual TimePoint Now() = 0;
};

class SystemClock : public Clock {
 public:
  TimePoint Now() override { return std::chrono::system_clock::now(); }
};

// "2006-01-02T15:04:05Z" (metav1.Time) and "2006-01-02T15:04:05.000000Z" (MicroTime).
std::string FormatTime(Clock::TimePoint t);
std::string FormatMicroTime(Clock::TimePoint t);
// Parses either spelling; false when malformed.
bool ParseTime(const std::string& text, Clock::TimePoint* out);

}  // namespace tpu::kube
