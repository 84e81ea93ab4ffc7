// Time as the program sees it, so that tests can move time instead of
// sleeping: steady time for deadlines, backoff and leases' local expiry; wall
// time for what people and other systems stamp by the calendar (change
// windows, Kubernetes timestamps, token expiry); and sleeping, for retry
// backoff. The machine's clock is Env::Default() (base/env.h), a test's is a
// FakeEnv (base/fake_env.h). Code that blocks in the kernel until a deadline
// (poll, a condition variable) cannot be woken by a fake clock and uses
// std::chrono::steady_clock itself (docs/architecture.md, "The environment").
#pragma once

#include <chrono>

namespace tpu {

using SteadyTime = std::chrono::steady_clock::time_point;
using WallTime = std::chrono::system_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual SteadyTime Now() const = 0;
  virtual WallTime WallNow() const = 0;
  // Blocks the calling thread for d; a fake clock moves on by d instead.
  virtual void SleepFor(std::chrono::steady_clock::duration d) = 0;
};

}  // namespace tpu
