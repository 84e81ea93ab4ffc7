// StepTask: mutation → operation polls → next step, with retries and stockouts.
#include "apply/step_task.h"

#include <spdlog/spdlog.h>

namespace tpu::apply {

bool IsStockout(const cloud::Operation& op) {
  if (!op.failed()) return false;
  // The last: a specific reservation that is full ("Reservation does not have
  // enough resources for the request: specific reservation … is insufficient"),
  // which frees up as its other consumers go, as a zone's stock does.
  for (const char* marker : {"GCE_STOCKOUT", "ZONE_RESOURCE_POOL_EXHAUSTED", "STOCKOUT",
                             "does not have enough resources available",
                             "does not have enough resources for the request"}) {
    if (op.error_reason.find(marker) != std::string::npos ||
        op.error_message.find(marker) != std::string::npos)
      return true;
  }
  return false;
}

std::string OperationKind(const cloud::Operation& op) {
  if (op.api == cloud::Operation::Api::kGke) return "gke " + op.operation_type;
  // ".../instanceGroupManagers/name" → "instanceGroupManagers"
  std::string collection;
  const auto last = op.target_link.find_last_of('/');
  if (last != std::string::npos && last > 0) {
    const auto before = op.target_link.find_last_of('/', last - 1);
    collection = op.target_link.substr(before == std::string::npos ? 0 : before + 1,
                                       last - (before == std::string::npos ? 0 : before + 1));
  }
  return "compute " + op.operation_type + " " + collection;
}

StepTask::StepTask(cloud::OperationPoller* poller, StepTaskOptions options,
                   std::vector<Step> steps)
    : poller_(poller), options_(options), steps_(std::move(steps)), rng_(options.seed) {}

Outcome StepTask::Advance() {
  if (index_ >= steps_.size()) return NextStep();
  return op_ ? Poll() : Call();
}

Outcome StepTask::Retry(const cloud::ApiError& error, const std::string& what, bool throttled) {
  auto now = options_.clock->Now();
  if (retry_attempt_ == 0) {
    first_failure_ = now;
    failures_ = 0;
  }
  // A 429 at the cluster's operations quota is the cluster being busy, not
  // this call failing: only the deadline bounds those.
  if (!throttled) ++failures_;
  if (failures_ > options_.budget.max_retries || now - first_failure_ >= options_.budget.deadline) {
    return Outcome::Failed(error.ToStatus().WithContext(
        what + ": gave up after " + std::to_string(retry_attempt_) + " retries"));
  }
  auto delay = options_.retry.Delay(error, retry_attempt_, rng_());
  ++retry_attempt_;
  ++total_retries_;
  spdlog::debug("{}: retry {} in {} ms: {}", what, retry_attempt_, delay.count(),
                error.ToStatus().message());
  const std::string note = what + ": retrying (" + error.ToStatus().message() + ")";
  if (!throttled) return Outcome::Again(delay, note);
  ++total_throttled_;
  return Outcome::Throttled(delay, note);
}

Outcome StepTask::Call() {
  const Step& step = steps_[index_];
  if (options_.may_mutate && !options_.may_mutate()) {
    return Outcome::Failed(Status::FailedPrecondition(step.what + ": not started: this replica no longer owns the "
                                                      "target (its shard moved to another replica)"));
  }
  if (step.prepare) {
    auto call = step.prepare();
    if (!call.ok()) return AfterCall(call.error());
    return Outcome::Send(call->transport, std::move(call->request),
                         [this, finish = std::move(call->finish)](Result<http::HttpResponse> r) {
                           return AfterCall(finish(std::move(r)));
                         });
  }
  return AfterCall(step.call());
}

Outcome StepTask::AfterCall(cloud::ApiResult<cloud::Operation> result) {
  const Step& step = steps_[index_];
  if (!result.ok()) {
    const cloud::ApiError& e = result.error();
    // 429 on a mutation: the cluster's concurrent operations are at their
    // quota; the task gives its place back so fewer of ours run at once.
    if (e.rate_limited()) return Retry(e, step.what, /*throttled=*/true);
    if (e.retryable()) return Retry(e, step.what);
    if (step.done_despite && step.done_despite(e)) {
      ++index_;
      retry_attempt_ = 0;
      return NextStep();
    }
    return Outcome::Failed(result.status().WithContext(step.what));
  }
  retry_attempt_ = 0;
  op_ = std::move(result.value());
  poll_attempt_ = 0;
  late_polls_ = 0;
  seen_running_ = std::chrono::milliseconds(0);
  op_started_ = options_.clock->Now();
  op_kind_ = step.learn_timing && options_.times ? OperationKind(*op_) : "";
  expected_ = op_kind_.empty() ? std::nullopt : options_.times->Expected(op_kind_);
  const bool ours = step.learn_timing;  // an operation of ours started (not one awaited)
  // Rare: finished at once. OperationDone may replace the steps (a stockout), so `step` is not used after.
  Outcome out = op_->done() ? OperationDone() : WaitForPoll(NextPoll(), step.what + ": waiting for " + op_->name);
  out.call_accepted = ours;
  return out;
}

std::chrono::milliseconds StepTask::NextPoll() {
  // An operation started before any of its kind had finished follows the
  // fallback schedule until one has: then the estimate, like the rest.
  if (!expected_ && !op_kind_.empty()) expected_ = options_.times->Expected(op_kind_);
  if (!expected_) return last_fallback_delay_ = options_.poll.Delay(poll_attempt_++, rng_());
  auto age = std::chrono::duration_cast<std::chrono::milliseconds>(options_.clock->Now() - op_started_);
  if (age >= *expected_) return options_.poll.DelayExpecting(*expected_, age, late_polls_++, rng_());
  return options_.poll.DelayExpecting(*expected_, age, 0, rng_());
}

Outcome StepTask::WaitForPoll(std::chrono::milliseconds wait, std::string note) {
  if (!options_.watch) return Outcome::Again(wait, std::move(note));
  // Through the watch the task waits for its poll there, not on a timer: it
  // is answered at its poll time at the latest (plus a late step's share of
  // its expected time, or before its kind's time is known a quarter of the
  // wait, to go out with others of its project), and sooner if a list sent
  // for others shows its operation done.
  const double share = expected_ ? static_cast<double>(expected_->count()) * options_.poll.late_step
                                 : static_cast<double>(last_fallback_delay_.count()) / 4;
  const auto slack = std::max(options_.poll.min_step, std::chrono::milliseconds(static_cast<int64_t>(share)));
  Outcome out = Outcome::Wait([this, wait, slack](std::function<void(std::function<Outcome()>)> resume) {
    options_.watch->PollAfter(*op_, wait, slack, [this, resume = std::move(resume)](cloud::ApiResult<cloud::Operation> r) {
      // Timed when answered: the answer may come from any list sent meanwhile.
      const auto answered = options_.clock->Now();
      resume([this, answered, r = std::move(r)]() mutable { return AfterPoll(std::move(r), answered); });
    });
  });
  out.note = std::move(note);
  return out;
}

Outcome StepTask::Poll() {
  if (op_->done()) return OperationDone();
  if (options_.watch) return WaitForPoll(std::chrono::milliseconds(0), steps_[index_].what + ": waiting for " + op_->name);
  const auto sent = options_.clock->Now();
  auto call = poller_->PreparePoll(*op_);
  if (!call.ok()) return AfterPoll(call.error(), sent);
  return Outcome::Send(call->transport, std::move(call->request),
                       [this, sent, finish = std::move(call->finish)](Result<http::HttpResponse> r) {
                         return AfterPoll(finish(std::move(r)), sent);
                       });
}

Outcome StepTask::AfterPoll(cloud::ApiResult<cloud::Operation> polled, std::chrono::steady_clock::time_point sent) {
  const Step& step = steps_[index_];
  if (!polled.ok()) {
    const cloud::ApiError& e = polled.error();
    if (e.retryable()) return Retry(e, step.what);
    if (e.not_found()) {
      // Operations are garbage-collected eventually; the next plan reads the
      // resource itself, so count the step as done rather than fail.
      op_.reset();
      ++index_;
      return NextStep();
    }
    return Outcome::Failed(polled.status().WithContext(step.what + ": polling " + op_->name));
  }
  retry_attempt_ = 0;
  op_ = std::move(polled.value());
  const auto age = std::chrono::duration_cast<std::chrono::milliseconds>(sent - op_started_);
  if (!op_->done()) {
    seen_running_ = age;
    return WaitForPoll(NextPoll(), step.what + ": waiting for " + op_->name);
  }
  if (!op_kind_.empty()) options_.times->Observe(op_kind_, expected_, seen_running_, age);
  return OperationDone();
}

Outcome StepTask::OperationDone() {
  const Step& step = steps_[index_];
  cloud::Operation op = std::move(*op_);
  op_.reset();
  if (op.failed() && !step.tolerate_failed_operation) {
    if (IsStockout(op) && !step.on_stockout.empty() && !stockout_) {
      const bool falls_back = !step.fallback.empty();
      stockout_ = !falls_back;
      stockout_status_ = Status::ResourceExhausted(step.what + ": " + op.error_message);
      std::vector<Step> next = step.on_stockout;
      next.insert(next.end(), step.fallback.begin(), step.fallback.end());
      steps_.erase(steps_.begin() + static_cast<long>(index_), steps_.end());
      steps_.insert(steps_.end(), next.begin(), next.end());
      ++fell_back_;
      return Outcome::Again(std::chrono::milliseconds(0),
                            falls_back ? "no capacity: cleaning up, then the next rung of its capacity ladder"
                                       : "no capacity: cleaning up");
    }
    if (IsStockout(op)) return Outcome::WaitingForCapacity(Status::ResourceExhausted(
        step.what + ": " + op.error_message));
    return Outcome::Failed(Status::Internal(step.what + ": operation " + op.name + " failed: " +
                                            op.error_message));
  }
  ++index_;
  return NextStep();
}

Outcome StepTask::NextStep() {
  if (index_ < steps_.size()) return Outcome::Again(std::chrono::milliseconds(0));
  if (stockout_) return Outcome::WaitingForCapacity(stockout_status_);
  return Outcome::Done();
}

}  // namespace tpu::apply
