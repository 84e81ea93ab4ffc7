// TargetBackoff: when a target whose last reconcile failed may be tried again.
//
// Each target backs off on its own, exponentially (initial, 2×, 4× … up to
// max), so one broken cluster never slows or stops the others. A stockout
// (waiting for capacity) uses its own, slower clock. No jitter: one daemon
// retries few targets, and deterministic delays keep /status and tests exact.
// Not thread-safe: owned by the reconciler's thread.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "daemon/clock.h"

namespace tpu::daemon {

struct BackoffPolicy {
  std::chrono::milliseconds initial{std::chrono::seconds(10)};
  std::chrono::milliseconds max{std::chrono::minutes(10)};
  std::chrono::milliseconds capacity_initial{std::chrono::minutes(2)};
  std::chrono::milliseconds capacity_max{std::chrono::minutes(30)};
};

class TargetBackoff {
 public:
  explicit TargetBackoff(BackoffPolicy policy = {}) : policy_(policy) {}

  // Records a failure at `now`; returns the delay until the next attempt.
  std::chrono::milliseconds Failed(const std::string& target, TimePoint now, bool waiting_for_capacity);
  // Clears the target's failures.
  void Succeeded(const std::string& target) { entries_.erase(target); }
  void Forget(const std::string& target) { entries_.erase(target); }

  // True when the target has no failure pending or its delay has passed.
  bool Ready(const std::string& target, TimePoint now) const;
  // Backing off with its retry time now passed.
  bool RetryDue(const std::string& target, TimePoint now) const;
  // Failures in a row (0 when none).
  int failures(const std::string& target) const;
  std::optional<TimePoint> RetryAt(const std::string& target) const;
  // The earliest retry of any target.
  std::optional<TimePoint> NextRetry() const;

 private:
  struct Entry {
    int failures = 0;
    TimePoint retry_at{};
  };
  BackoffPolicy policy_;
  std::map<std::string, Entry> entries_;
};

}  // namespace tpu::daemon
