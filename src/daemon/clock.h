// The daemon's names for the one clock (base/clock.h): deadlines, drift checks
// and backoff are steady time.
#pragma once

#include "base/clock.h"

namespace tpu::daemon {

using TimePoint = SteadyTime;
using Duration = std::chrono::steady_clock::duration;
using SteadyClock = SystemClock;

}  // namespace tpu::daemon
