// Clock: where the reconcile loop reads the time, so tests can drive drift
// checks and backoff without sleeping. Only steady (monotonic) time is needed:
// every deadline here is "so long after something happened".
#pragma once

#include <chrono>

namespace tpu::daemon {

using TimePoint = std::chrono::steady_clock::time_point;
using Duration = std::chrono::steady_clock::duration;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
  // Wall time, for what people schedule by the calendar (change windows).
  virtual std::chrono::system_clock::time_point WallNow() const { return std::chrono::system_clock::now(); }
};

class SteadyClock : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
};

// A clock that moves only when told to. Not thread-safe: tests drive it from
// the thread that runs the reconciler.
class ManualClock : public Clock {
 public:
  TimePoint Now() const override { return now_; }
  std::chrono::system_clock::time_point WallNow() const override { return wall_; }
  void Advance(Duration d) {
    now_ += d;
    wall_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
  }
  void SetWall(std::chrono::system_clock::time_point t) { wall_ = t; }

 private:
  TimePoint now_ = TimePoint{} + std::chrono::hours(1);
  std::chrono::system_clock::time_point wall_ = std::chrono::system_clock::time_point{} + std::chrono::hours(24 * 365 * 56);
};

}  // namespace tpu::daemon
