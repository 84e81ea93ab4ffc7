// The daemon's names for time (base/clock.h; the clock is an Env, base/env.h):
// deadlines, drift checks and backoff are steady time.
#pragma once

#include "base/env.h"

namespace tpu::daemon {

using TimePoint = SteadyTime;
using Duration = std::chrono::steady_clock::duration;

}  // namespace tpu::daemon
