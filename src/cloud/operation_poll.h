// Polling long-running operations without parking a thread on each (DESIGN §6).
//
// The executor's loop, as intended:
//   1. A mutating call (CreateNodePool, InsertInstanceGroupManager …) returns an
//      Operation. Put {op, next_poll = now + PollSchedule::Delay(0)} in a timer heap.
//   2. When an entry is due, a worker from a small fixed pool calls
//      OperationPoller::Poll(op) — one short GET — and either finishes the
//      action (op.done(); op.failed() → op.error_reason says GCE_STOCKOUT,
//      ZONE_RESOURCE_POOL_EXHAUSTED …) or re-queues with Delay(attempt + 1).
//   3. A failed Poll is an ApiError: if retryable(), re-queue with
//      RetryDelay(error, attempt); a 404 on the operation means it was
//      garbage-collected — re-read the resource instead.
// After a crash, GkeClient::ListOperations / ComputeClient::ListOperations
// (or Refresh with include_operations) give the still-running operations to
// put back into the heap.
#pragma once

#include <chrono>
#include <cstdint>

#include "cloud/api_error.h"
#include "cloud/compute_client.h"
#include "cloud/gke_client.h"
#include "cloud/types.h"

namespace tpu::cloud {

// Dispatches a poll to the API that owns the operation. Thread-safe.
class OperationPoller {
 public:
  OperationPoller(GkeClient* gke, ComputeClient* compute) : gke_(gke), compute_(compute) {}
  // One GET of the operation's current state. Never waits for it to finish.
  ApiResult<Operation> Poll(const Operation& op);

 private:
  GkeClient* gke_;
  ComputeClient* compute_;
};

// When to poll a running operation again: initial, then ×multiplier up to max,
// each with ±jitter so 1,000 operations started together do not poll together.
struct PollSchedule {
  std::chrono::milliseconds initial{1'000};
  std::chrono::milliseconds max{15'000};
  double multiplier = 1.5;
  double jitter = 0.2;  // fraction of the delay
  // `random` is any uniformly distributed 64-bit value (the caller owns the RNG).
  std::chrono::milliseconds Delay(int attempt, uint64_t random) const;
};

// When to retry a failed call: exponential backoff with full jitter,
// random in [0, min(cap, base·2^attempt)], never sooner than Retry-After.
struct RetrySchedule {
  std::chrono::milliseconds base{1'000};
  std::chrono::milliseconds cap{60'000};
  std::chrono::milliseconds Delay(const ApiError& error, int attempt, uint64_t random) const;
};

}  // namespace tpu::cloud
