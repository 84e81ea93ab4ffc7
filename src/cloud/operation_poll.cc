// Operation polling dispatch and the poll/retry schedules.
#include "cloud/operation_poll.h"

#include <algorithm>
#include <cmath>

namespace tpu::cloud {
namespace {

// A uniform double in [0, 1) from 53 random bits.
double Unit(uint64_t random) { return static_cast<double>(random >> 11) * 0x1.0p-53; }

}  // namespace

ApiResult<Operation> OperationPoller::Poll(const Operation& op) {
  if (op.api == Operation::Api::kGke) {
    return gke_->GetOperation(op.project, op.location.empty() ? "-" : op.location, op.name);
  }
  return compute_->GetOperation(op);
}

std::chrono::milliseconds PollSchedule::Delay(int attempt, uint64_t random) const {
  double base = static_cast<double>(initial.count()) * std::pow(multiplier, std::max(attempt, 0));
  base = std::min(base, static_cast<double>(max.count()));
  double spread = base * jitter;
  double d = base - spread + 2 * spread * Unit(random);
  return std::chrono::milliseconds(static_cast<int64_t>(std::max(d, 1.0)));
}

std::chrono::milliseconds RetrySchedule::Delay(const ApiError& error, int attempt, uint64_t random) const {
  double ceiling = static_cast<double>(base.count()) * std::pow(2.0, std::min(std::max(attempt, 0), 30));
  ceiling = std::min(ceiling, static_cast<double>(cap.count()));
  auto d = std::chrono::milliseconds(static_cast<int64_t>(ceiling * Unit(random)));
  if (error.retry_after) d = std::max(d, std::chrono::duration_cast<std::chrono::milliseconds>(*error.retry_after));
  return d;
}

}  // namespace tpu::cloud
