// The one clock every module reads time from, so that tests can move time
// instead of sleeping: steady time for deadlines, backoff and leases' local
// expiry; wall time for what people and other systems stamp by the calendar
// (change windows, Kubernetes timestamps, token expiry).
#pragma once

#include <chrono>

namespace tpu {

using SteadyTime = std::chrono::steady_clock::time_point;
using WallTime = std::chrono::system_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual SteadyTime Now() const = 0;
  virtual WallTime WallNow() const { return std::chrono::system_clock::now(); }
};

class SystemClock : public Clock {
 public:
  SteadyTime Now() const override { return std::chrono::steady_clock::now(); }
};

// A clock that moves only when told to, both times together. Not thread-safe:
// tests drive it from the thread that reads it.
class ManualClock : public Clock {
 public:
  SteadyTime Now() const override { return now_; }
  WallTime WallNow() const override { return wall_; }
  void Advance(std::chrono::steady_clock::duration d) {
    now_ += d;
    wall_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
  }
  void SetWall(WallTime t) { wall_ = t; }

 private:
  SteadyTime now_ = SteadyTime{} + std::chrono::hours(1);
  WallTime wall_ = WallTime{} + std::chrono::hours(24 * 365 * 56);
};

}  // namespace tpu
