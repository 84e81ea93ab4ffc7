// Operation polling dispatch and the poll/retry schedules.
#include "cloud/operation_poll.h"

#include <algorithm>
#include <cmath>

namespace tpu::cloud {
namespace {

// A uniform double in [0, 1) from 53 random bits.
double Unit(uint64_t random) { return static_cast<double>(random >> 11) * 0x1.0p-53; }

}  // namespace

ApiResult<Operation> OperationPoller::Poll(const Operation& op) { return SendPrepared(PreparePoll(op)); }

Prepared<Operation> OperationPoller::PreparePoll(const Operation& op) {
  if (op.api == Operation::Api::kGke) {
    return gke_->PrepareGetOperation(op.project, op.location.empty() ? "-" : op.location, op.name);
  }
  return compute_->PrepareGetOperation(op);
}

std::chrono::milliseconds PollSchedule::Delay(int attempt, uint64_t random) const {
  double base = static_cast<double>(initial.count()) * std::pow(multiplier, std::max(attempt, 0));
  base = std::min(base, static_cast<double>(max.count()));
  double spread = base * jitter;
  double d = base - spread + 2 * spread * Unit(random);
  return std::chrono::milliseconds(static_cast<int64_t>(std::max(d, 1.0)));
}

std::chrono::milliseconds PollSchedule::DelayExpecting(std::chrono::milliseconds expected,
                                                       std::chrono::milliseconds age, int late,
                                                       uint64_t random) const {
  using std::chrono::milliseconds;
  if (age < expected) return std::max(milliseconds(1), std::min(expected - age, max));
  double step = std::max(static_cast<double>(expected.count()) * late_step, static_cast<double>(min_step.count()));
  step *= std::pow(multiplier, std::max(late, 0));
  step = std::min(step, static_cast<double>(max.count()));
  double spread = step * jitter;
  double d = step - spread + 2 * spread * Unit(random);
  return milliseconds(static_cast<int64_t>(std::max(d, 1.0)));
}

std::optional<std::chrono::milliseconds> OperationTimes::Expected(const std::string& kind) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = expected_ms_.find(kind);
  if (it == expected_ms_.end()) return std::nullopt;
  return std::chrono::milliseconds(static_cast<int64_t>(it->second));
}

void OperationTimes::Observe(const std::string& kind, std::optional<std::chrono::milliseconds> expected,
                             std::chrono::milliseconds running, std::chrono::milliseconds done) {
  const double lo = static_cast<double>(running.count());
  const double hi = static_cast<double>(std::max(done, running).count());
  std::lock_guard<std::mutex> lock(mu_);
  auto it = expected_ms_.find(kind);
  if (it == expected_ms_.end()) {
    // First sight: somewhere in (lo, hi]; with no running poll, hi is all we know.
    expected_ms_[kind] = running.count() > 0 ? (lo + hi) / 2 : hi;
    return;
  }
  double& e = it->second;
  if (!expected) {
    // Polled on the fallback schedule (started before the first estimate).
    if (running.count() > 0) e += ((lo + hi) / 2 - e) / 2;
    else if (hi < e) e += (hi - e) / 2;
  } else if (running < *expected) {
    e *= 0.98;  // done by the time we expected: try a little sooner
  } else {
    // Still running then: halfway to where it ended. Bounded by what was
    // seen, so a wave of misses cannot run away (nor a wave of hits, which
    // the next misses pull back).
    e += ((lo + hi) / 2 - e) / 2;
  }
  e = std::max(e, 1.0);
}

std::chrono::milliseconds RetrySchedule::Delay(const ApiError& error, int attempt, uint64_t random) const {
  double ceiling = static_cast<double>(base.count()) * std::pow(2.0, std::min(std::max(attempt, 0), 30));
  ceiling = std::min(ceiling, static_cast<double>(cap.count()));
  auto d = std::chrono::milliseconds(static_cast<int64_t>(ceiling * Unit(random)));
  if (error.retry_after) d = std::max(d, std::chrono::duration_cast<std::chrono::milliseconds>(*error.retry_after));
  return d;
}

}  // namespace tpu::cloud
