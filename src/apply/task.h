// Task: one plan action as a small state machine the executor advances.
//
// Advance() runs on a worker thread, makes at most one API call, and says what
// happens next: finished, failed, waiting for capacity, "call me again after
// D" (an operation still running, a retryable error backing off),
// "throttled": the cloud refused the call for too many operations at once, so
// the task gives its place back and waits for room in its group, or "send
// this request, then continue with its answer": the scheduler submits it to
// the transport (the event loop, http/curl_multi.h) and runs the continuation
// on a worker when the answer is in. Waiting is a timer or a request in the
// loop, never a blocked thread, so a thousand operations in flight cost a
// thousand timers or requests, not a thousand threads.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "http/transport.h"

namespace tpu::apply {

struct PendingCall;

struct Outcome {
  enum class Kind {
    kDone,                // the action is applied
    kFailed,              // a permanent error: `status` says why
    kWaitingForCapacity,  // stockout: nothing left behind, retry later on a slower clock
    kAgain,               // call Advance() again after `delay`
    // 429 "Too many operations": back to pending, startable again after
    // `delay` when its group has room; the group's limit is lowered.
    kThrottled,
    // Send `call->request`; `call->then` turns the answer into the next
    // Outcome (or, for a call with `start`, start it). The task holds its
    // place, but no thread, meanwhile.
    kCall,
  };
  Kind kind = Kind::kDone;
  std::chrono::milliseconds delay{0};
  Status status;
  std::string note;  // what the task is doing now, for progress ("waiting for operation-…")
  // This Advance()'s mutating call was accepted (an operation started): its
  // group may grow its limit back a step.
  bool call_accepted = false;
  std::shared_ptr<PendingCall> call;  // kCall only

  static Outcome Done() { return {}; }
  static Outcome Failed(Status s) { return Of(Kind::kFailed, {}, std::move(s), {}); }
  static Outcome WaitingForCapacity(Status s) { return Of(Kind::kWaitingForCapacity, {}, std::move(s), {}); }
  static Outcome Again(std::chrono::milliseconds d, std::string note = {}) {
    return Of(Kind::kAgain, d, Status::OK(), std::move(note));
  }
  static Outcome Throttled(std::chrono::milliseconds d, std::string note = {}) {
    return Of(Kind::kThrottled, d, Status::OK(), std::move(note));
  }
  static Outcome Send(http::HttpTransport* transport, http::HttpRequest request,
                      std::function<Outcome(Result<http::HttpResponse>)> then);
  // An answer that does not come from a request of the task's own (an
  // operation's state from its project's batched list, cloud/operation_watch.h):
  // see PendingCall::start.
  static Outcome Wait(std::function<void(std::function<void(std::function<Outcome()>)>)> start);

 private:
  static Outcome Of(Kind kind, std::chrono::milliseconds delay, Status status, std::string note) {
    Outcome out;
    out.kind = kind;
    out.delay = delay;
    out.status = std::move(status);
    out.note = std::move(note);
    return out;
  }
};

struct PendingCall {
  http::HttpTransport* transport = nullptr;
  http::HttpRequest request;
  // Runs on a worker, never concurrently with the task's Advance().
  std::function<Outcome(Result<http::HttpResponse>)> then;
  // Or, in place of the three above: starts the wait, and calls the function
  // it is given exactly once, from any thread, with the continuation that
  // turns the answer into the next Outcome (run on a worker, as `then`).
  std::function<void(std::function<void(std::function<Outcome()>)>)> start = {};
};

inline Outcome Outcome::Send(http::HttpTransport* transport, http::HttpRequest request,
                             std::function<Outcome(Result<http::HttpResponse>)> then) {
  Outcome out;
  out.kind = Kind::kCall;
  out.call = std::make_shared<PendingCall>(PendingCall{transport, std::move(request), std::move(then)});
  return out;
}

inline Outcome Outcome::Wait(std::function<void(std::function<void(std::function<Outcome()>)>)> start) {
  Outcome out;
  out.kind = Kind::kCall;
  out.call = std::make_shared<PendingCall>();
  out.call->start = std::move(start);
  return out;
}

class Task {
 public:
  virtual ~Task() = default;
  // Advances the action by at most one API call. Called from one thread at a
  // time for a given task (never concurrently with itself, nor with the
  // continuation of a call it returned).
  virtual Outcome Advance() = 0;
};

// What the scheduler needs to know about a task besides how to run it.
struct TaskSpec {
  std::string id;            // unique in a run, e.g. "create proj/cluster/pool-0"
  // Tasks with the same lane run one at a time, in the order added (a GKE node
  // pool: one operation per pool); "" = none.
  std::string lane;
  std::vector<std::string> after;  // ids that must be done first
  std::string description;   // "+ create proj/cluster/pool-0"
  // Tasks with the same group share its limit of tasks started at once (a GKE
  // cluster: its concurrent-operations quota); "" = none.
  std::string group;
};

}  // namespace tpu::apply
