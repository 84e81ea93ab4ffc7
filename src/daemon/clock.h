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
  void Advance(Duration d) { now_ += d; }

 private:
  TimePoint now_ = TimePoint{} + std::chrono::hours(1);
};

}  // namespace tpu::daemon
