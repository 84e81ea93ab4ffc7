// Backoff: exponential backoff with full jitter (delay drawn uniformly from
// [0, min(cap, base·2^attempt)]), honouring a server's Retry-After as a floor,
// and bounded by a deadline. One Backoff per call site being retried; not
// thread-safe. The random source is seeded so tests and fault runs reproduce.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>

namespace tpu::apply {

class Backoff {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    std::chrono::milliseconds base{200};
    std::chrono::milliseconds cap{30'000};
    std::chrono::milliseconds deadline{10 * 60'000};  // give up this long after the first failure
    uint64_t seed = 0;
  };

  explicit Backoff(Options options);
  // The delay before the next try, or nullopt when the deadline has passed.
  // `retry_after` (from the response) is honoured as a minimum.
  std::optional<std::chrono::milliseconds> Next(
      std::optional<std::chrono::milliseconds> retry_after = std::nullopt);
  // Forget the failures: the call succeeded.
  void Reset();
  int attempts() const { return attempts_; }

 private:
  Options options_;
  std::mt19937_64 rng_;
  int attempts_ = 0;
  Clock::time_point first_failure_{};
};

}  // namespace tpu::apply
