// Polling long-running operations without parking a thread on each (docs/architecture.md, "Apply rules").
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
#include <map>
#include <mutex>
#include <optional>
#include <string>

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
  // The same GET, prepared to be sent on an event loop (api_caller.h).
  Prepared<Operation> PreparePoll(const Operation& op);

 private:
  GkeClient* gke_;
  ComputeClient* compute_;
};

// When to poll a running operation again. Two regimes:
//  - nothing known about how long this kind of operation takes: initial, then
//    ×multiplier up to max, each with ±jitter so 1,000 operations started
//    together do not poll together (Delay);
//  - an expected duration learned from earlier operations of the same kind
//    (OperationTimes below): wait until then (never longer than max between
//    polls), then poll in short steps — `late_step` of the expected time, at
//    least min_step — growing ×multiplier up to max (DelayExpecting).
// The first regime starts soon (100 ms) because the operation's time is
// unknown: a 200 ms operation is not held for a second, and a 5-minute GKE
// create reaches the 15 s cap after a dozen polls.
struct PollSchedule {
  std::chrono::milliseconds initial{100};
  std::chrono::milliseconds max{15'000};
  double multiplier = 1.5;
  double jitter = 0.2;  // fraction of the delay
  std::chrono::milliseconds min_step{10};
  // The first step after the expected time, as a fraction of it. A tenth
  // when each poll is a GET of its own; batched polls (operation_watch.h)
  // share one list per project, so the apply takes finer steps then.
  double late_step = 0.1;
  // `random` is any uniformly distributed 64-bit value (the caller owns the RNG).
  std::chrono::milliseconds Delay(int attempt, uint64_t random) const;
  // The next poll of an operation `age` old (since its call returned) that is
  // expected done at `expected`; `late` counts the polls already made at or
  // after `expected`.
  std::chrono::milliseconds DelayExpecting(std::chrono::milliseconds expected, std::chrono::milliseconds age,
                                           int late, uint64_t random) const;
};

// How long each kind of operation ("gke CREATE_NODE_POOL", "compute insert")
// takes, learned from the ones this run has seen finish, as the age (time
// since the mutating call returned) at which a poll *sent* then finds it done —
// so request latency is learned along with the operation's own time.
// A poll at the expected time that finds the operation done lowers the
// estimate by 2 %; one that finds it still running moves it halfway to where
// the operation ended (the middle of the last two polls' ages). With steps of
// a tenth of the estimate after a miss, it settles where about half the
// operations are done at their first poll: most cost one or two polls, and
// none waits more than a step past its end.
// Thread-safe: one instance is shared by every task of an apply.
class OperationTimes {
 public:
  std::optional<std::chrono::milliseconds> Expected(const std::string& kind) const;
  // An operation of `kind` was last seen running by a poll sent at age
  // `running` (0: never) and seen done by one sent at age `done`. `expected`
  // is the estimate its polls followed (nullopt: none then).
  void Observe(const std::string& kind, std::optional<std::chrono::milliseconds> expected,
               std::chrono::milliseconds running, std::chrono::milliseconds done);

 private:
  mutable std::mutex mu_;
  std::map<std::string, double> expected_ms_;
};

// When to retry a failed call: exponential backoff with full jitter,
// random in [0, min(cap, base·2^attempt)], never sooner than Retry-After.
struct RetrySchedule {
  std::chrono::milliseconds base{1'000};
  std::chrono::milliseconds cap{60'000};
  std::chrono::milliseconds Delay(const ApiError& error, int attempt, uint64_t random) const;
};

}  // namespace tpu::cloud
