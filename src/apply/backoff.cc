// Backoff with full jitter (see backoff.h).
#include "apply/backoff.h"

#include <algorithm>

namespace tpu::apply {

Backoff::Backoff(Options options) : options_(options), rng_(options.seed) {}

std::optional<std::chrono::milliseconds> Backoff::Next(
    std::optional<std::chrono::milliseconds> retry_after) {
  auto now = Clock::now();
  if (attempts_ == 0) first_failure_ = now;
  if (now - first_failure_ >= options_.deadline) return std::nullopt;
  int shift = std::min(attempts_, 30);
  int64_t ceiling = std::min<int64_t>(options_.cap.count(),
                                      options_.base.count() * (int64_t{1} << shift));
  ++attempts_;
  std::uniform_int_distribution<int64_t> pick(0, std::max<int64_t>(ceiling, 0));
  std::chrono::milliseconds delay(pick(rng_));
  if (retry_after && *retry_after > delay) delay = *retry_after;
  // Never sleep past the deadline: the last try happens at it.
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      options_.deadline - (now - first_failure_));
  return std::min(delay, left);
}

void Backoff::Reset() { attempts_ = 0; }

}  // namespace tpu::apply
