// StepTask: an action as a list of steps, each one mutating API call followed
// by waiting for the operation it started — the shape of every create, delete,
// resize, update and replace in docs/architecture.md, "Apply rules".
//
// Each Advance() makes one call: the step's mutation, or one poll of its
// operation, returned prepared (Outcome::Send) so the scheduler sends it on
// the event loop and hands the answer back to the task on a worker. Retryable errors (5xx, dropped connections, GKE's "incompatible
// operation" while another operation runs on the pool or a cluster-level one on
// the cluster) come back as Outcome::Again after a jittered backoff honouring
// Retry-After, up to the retry budget; a 429 on a mutation (the cluster's
// concurrent-operations quota) as Outcome::Throttled, so the task gives its
// place back; other errors go to the step's handler or fail the action with
// the API's message. An operation that
// ends in a stockout runs the step's cleanup (delete the ERROR pool it left)
// and ends the task in WaitingForCapacity.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "apply/task.h"
#include "base/env.h"
#include "cloud/api_error.h"
#include "cloud/operation_poll.h"
#include "cloud/operation_watch.h"
#include "cloud/types.h"

namespace tpu::apply {

struct RetryBudget {
  int max_retries = 12;  // per call (a 429 at a cluster's operations quota does not count)
  std::chrono::milliseconds deadline{15 * 60'000};  // per call, from its first failure
};

struct StepTaskOptions {
  cloud::PollSchedule poll;
  // Operation durations learned across the tasks of one apply (shared; the
  // Executor makes one when null). Null here: the poll schedule's fallback only.
  std::shared_ptr<cloud::OperationTimes> times;
  // Polls go through it, batched per project (cloud/operation_watch.h); null:
  // each poll is a GET of its own.
  cloud::OperationWatch* watch = nullptr;
  cloud::RetrySchedule retry;
  RetryBudget budget;
  uint64_t seed = 0;
  // Read for retry deadlines and operation ages; the Executor times its run by it too.
  const Clock* clock = &Env::Default();
  // Asked before every mutating call: false ends the task as failed without
  // the call (a sharded `watch` that no longer holds the target's shard; its
  // next holder adopts what is in flight). Null: always.
  std::function<bool()> may_mutate;
};

struct Step {
  // What the step does, for progress and errors: "delete node pool p/l/c/n".
  std::string what;
  // The mutation, prepared for the scheduler to send (no thread waits for
  // it). Prepared again after a retryable error, so the token is fresh.
  std::function<cloud::Prepared<cloud::Operation>()> prepare;
  // Or, when there is nothing to send (an operation already known) or for
  // tests, the mutation made on the worker. Used when `prepare` is unset.
  std::function<cloud::ApiResult<cloud::Operation>()> call;
  // A non-retryable call error the step tolerates: return true to count the
  // step as done (a delete that finds nothing: 404).
  std::function<bool(const cloud::ApiError&)> done_despite;
  // When set and the operation ends in a stockout, run these steps and end the
  // task in WaitingForCapacity.
  std::vector<Step> on_stockout;
  // A capacity ladder's next rung (docs/capacity.md, "Fallback ladder"): on a
  // stockout these run after on_stockout's, in place of the steps left, and
  // the task goes on as if nothing failed.
  std::vector<Step> fallback;
  // The operation's own failure is not this action's (waiting for an operation
  // an earlier run started: the next plan sees what it left).
  bool tolerate_failed_operation = false;
  // The call starts its operation now, so its age is known and its duration
  // teaches the poll schedule (false: awaiting an operation started earlier).
  bool learn_timing = true;
};

class StepTask : public Task {
 public:
  StepTask(cloud::OperationPoller* poller, StepTaskOptions options, std::vector<Step> steps);
  Outcome Advance() override;

  // Counters for tests and the reliability report.
  int retries() const { return total_retries_; }  // throttles included
  int throttled() const { return total_throttled_; }
  int fell_back() const { return fell_back_; }  // stockouts met (each moved down a rung when it could)

 private:
  Outcome Call();
  // The mutation's answer.
  Outcome AfterCall(cloud::ApiResult<cloud::Operation> result);
  Outcome Poll();
  // A poll's answer; `sent` is when it was made.
  Outcome AfterPoll(cloud::ApiResult<cloud::Operation> polled, std::chrono::steady_clock::time_point sent);
  // op_ is done: the next step, the stockout cleanup, or the failure.
  Outcome OperationDone();
  Outcome NextStep();
  Outcome Retry(const cloud::ApiError& error, const std::string& what, bool throttled = false);
  // Delay before the next poll of op_.
  std::chrono::milliseconds NextPoll();
  // Polls op_ after `wait`: a timer, then a GET; or, with a watch, a wait
  // in its project's batch that ends by then or when a list shows op_ done.
  Outcome WaitForPoll(std::chrono::milliseconds wait, std::string note);

  cloud::OperationPoller* poller_;
  StepTaskOptions options_;
  std::vector<Step> steps_;
  size_t index_ = 0;
  std::optional<cloud::Operation> op_;
  int poll_attempt_ = 0;
  // Timing of op_, for OperationTimes: its kind ("" = not learned from), when
  // its call returned, the estimate it follows, the age of the last poll that
  // saw it running, and the polls made at or after the expected time.
  std::string op_kind_;
  std::chrono::steady_clock::time_point op_started_{};
  std::optional<std::chrono::milliseconds> expected_;
  std::chrono::milliseconds seen_running_{0};
  int late_polls_ = 0;
  std::chrono::milliseconds last_fallback_delay_{0};  // the fallback schedule's latest wait
  int retry_attempt_ = 0;  // retries of the current call (its backoff grows with it)
  int failures_ = 0;       // of them, not throttles: the ones max_retries bounds
  std::chrono::steady_clock::time_point first_failure_{};
  int total_retries_ = 0;
  int total_throttled_ = 0;
  bool stockout_ = false;       // running on_stockout steps, then WaitingForCapacity
  int fell_back_ = 0;
  Status stockout_status_;
  std::mt19937_64 rng_;
};

// The key OperationTimes learns an operation's duration under: the API, its
// type and, for Compute, the collection of its target ("compute insert
// instanceTemplates"), since Compute's types are generic.
std::string OperationKind(const cloud::Operation& op);

// True when a finished operation failed for lack of capacity (GCE_STOCKOUT,
// ZONE_RESOURCE_POOL_EXHAUSTED and their spellings in messages).
bool IsStockout(const cloud::Operation& op);

}  // namespace tpu::apply
