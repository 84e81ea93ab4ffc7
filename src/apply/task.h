// Task: one plan action as a small state machine the executor advances.
//
// Advance() runs on a worker thread, makes at most one API call, and says what
// happens next: finished, failed, waiting for capacity, or "call me again after
// D" (an operation still running, a retryable error backing off). Waiting is a
// timer in the scheduler, never a blocked thread, so a thousand operations in
// flight cost a thousand timers, not a thousand threads.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/status.h"

namespace tpu::apply {

struct Outcome {
  enum class Kind {
    kDone,                // the action is applied
    kFailed,              // a permanent error: `status` says why
    kWaitingForCapacity,  // stockout: nothing left behind, retry later on a slower clock
    kAgain,               // call Advance() again after `delay`
  };
  Kind kind = Kind::kDone;
  std::chrono::milliseconds delay{0};
  Status status;
  std::string note;  // what the task is doing now, for progress ("waiting for operation-…")

  static Outcome Done() { return {}; }
  static Outcome Failed(Status s) { return {Kind::kFailed, {}, std::move(s), {}}; }
  static Outcome WaitingForCapacity(Status s) {
    return {Kind::kWaitingForCapacity, {}, std::move(s), {}};
  }
  static Outcome Again(std::chrono::milliseconds d, std::string note = {}) {
    return {Kind::kAgain, d, Status::OK(), std::move(note)};
  }
};

class Task {
 public:
  virtual ~Task() = default;
  // Advances the action by at most one API call. Called from one thread at a
  // time for a given task (never concurrently with itself).
  virtual Outcome Advance() = 0;
};

// What the scheduler needs to know about a task besides how to run it.
struct TaskSpec {
  std::string id;            // unique in a run, e.g. "create proj/cluster/pool-0"
  std::string lane;          // tasks with the same lane run one at a time, in order; "" = none
  std::vector<std::string> after;  // ids that must be done first
  std::string description;   // "+ create proj/cluster/pool-0"
};

}  // namespace tpu::apply
