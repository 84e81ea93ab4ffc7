// StepTask's retry budget on a fake clock: a call that keeps failing with a
// retryable error is given up at the budget's deadline, measured from its
// first failure, and a throttled call (429) counts against the deadline only.
#include "apply/step_task.h"

#include <gtest/gtest.h>

#include "base/fake_env.h"

namespace tpu::apply {
namespace {

cloud::ApiError Error(int http) {
  cloud::ApiError e;
  e.http_status = http;
  e.message = "try again";
  e.call = "POST projects/p/locations/l/clusters/c/nodePools";
  return e;
}

// Advances the task until it leaves kAgain/kThrottled, moving the fake clock
// by each delay the task asks for. Returns the final outcome.
Outcome RunOnFakeTime(StepTask& task, FakeEnv& env, int* advances) {
  for (;;) {
    Outcome o = task.Advance();
    if (o.kind != Outcome::Kind::kAgain && o.kind != Outcome::Kind::kThrottled) return o;
    ++*advances;
    env.Advance(o.delay);
  }
}

TEST(StepTask, GivesUpAtTheDeadlineFromTheFirstFailure) {
  FakeEnv env;
  StepTaskOptions o;
  o.clock = &env;
  o.budget.max_retries = 1'000'000;  // only the deadline ends it
  o.budget.deadline = std::chrono::minutes(10);
  Step step;
  step.what = "create node pool p/l/c/a";
  step.call = [] { return cloud::ApiResult<cloud::Operation>(Error(503)); };
  StepTask task(nullptr, o, {step});

  const SteadyTime start = env.Now();
  int advances = 0;
  Outcome out = RunOnFakeTime(task, env, &advances);
  ASSERT_EQ(out.kind, Outcome::Kind::kFailed);
  EXPECT_NE(out.status.message().find("gave up after"), std::string::npos) << out.status.ToString();
  EXPECT_GE(env.Now() - start, std::chrono::minutes(10));
  // The last backoff is at most the schedule's cap past the deadline.
  EXPECT_LE(env.Now() - start, std::chrono::minutes(10) + o.retry.cap + std::chrono::seconds(1));
  EXPECT_EQ(task.retries(), advances);
}

TEST(StepTask, ThrottlesDoNotSpendTheRetryCount) {
  FakeEnv env;
  StepTaskOptions o;
  o.clock = &env;
  o.budget.max_retries = 2;
  o.budget.deadline = std::chrono::minutes(30);
  Step step;
  step.what = "create node pool p/l/c/a";
  step.call = [] { return cloud::ApiResult<cloud::Operation>(Error(429)); };
  StepTask task(nullptr, o, {step});

  int advances = 0;
  Outcome out = RunOnFakeTime(task, env, &advances);
  ASSERT_EQ(out.kind, Outcome::Kind::kFailed);
  EXPECT_GT(advances, 2) << "429s count against the deadline, not max_retries";
  EXPECT_EQ(task.throttled(), advances);
}

TEST(StepTask, MakesNoCallOnceItMayNoLongerMutate) {
  // A sharded watch that lost the target's shard between two steps: the
  // second step's call is never made.
  FakeEnv env;
  StepTaskOptions o;
  o.clock = &env;
  bool owned = true;
  o.may_mutate = [&] { return owned; };
  int calls = 0;
  Step step;
  step.what = "delete node pool p/l/c/a";
  step.call = [&] {
    ++calls;
    return cloud::ApiResult<cloud::Operation>(Error(404));
  };
  step.done_despite = [](const cloud::ApiError& e) { return e.not_found(); };
  Step second = step;
  second.what = "create node pool p/l/c/a";
  StepTask task(nullptr, o, {step, second});
  Outcome first = task.Advance();  // the delete finds nothing: done, on to the create...
  ASSERT_EQ(first.kind, Outcome::Kind::kAgain);
  owned = false;  // ...which the shard's loss stops
  Outcome out = task.Advance();
  ASSERT_EQ(out.kind, Outcome::Kind::kFailed);
  EXPECT_NE(out.status.message().find("no longer owns the target"), std::string::npos) << out.status.ToString();
  EXPECT_EQ(calls, 1);
}

TEST(StepTask, AFullReservationIsAStockoutNotAFailure) {
  cloud::Operation op;
  op.status = "DONE";
  op.error_code = 8;
  op.error_message = "Reservation does not have enough resources for the request: specific reservation \"r\" is "
                     "insufficient for node pool \"p\" at zone \"z\": required 4 and short of 4 VM count";
  EXPECT_TRUE(IsStockout(op));
  op.error_message = "Invalid value for field 'nodePool.name'";
  EXPECT_FALSE(IsStockout(op));
}

}  // namespace
}  // namespace tpu::apply

namespace tpu::apply {
namespace {

// A step whose call starts an operation that is already over: `stockout`
// makes it end in GCE_STOCKOUT. Each call appends `name` to *calls.
Step Immediate(const std::string& name, bool stockout, std::vector<std::string>* calls) {
  Step s;
  s.what = name;
  s.call = [name, stockout, calls] {
    calls->push_back(name);
    cloud::Operation op;
    op.name = "operation-" + name;
    op.status = "DONE";
    if (stockout) {
      op.error_code = 8;
      op.error_message = "GCE_STOCKOUT: The zone does not have enough resources available";
    }
    return cloud::ApiResult<cloud::Operation>(op);
  };
  return s;
}

// A capacity ladder: each stockout cleans up and creates the next rung; the
// task ends done on the first rung that has capacity.
TEST(StepTask, AStockoutWithAFallbackMovesDownTheLadderAndFinishes) {
  FakeEnv env;
  StepTaskOptions o;
  o.clock = &env;
  std::vector<std::string> calls;
  Step spot = Immediate("create spot", false, &calls);
  spot.on_stockout = {Immediate("delete spot", false, &calls)};
  Step on_demand = Immediate("create on-demand", true, &calls);
  on_demand.on_stockout = {Immediate("delete on-demand", false, &calls)};
  on_demand.fallback = {spot};
  Step reserved = Immediate("create reserved", true, &calls);
  reserved.on_stockout = {Immediate("delete reserved", false, &calls)};
  reserved.fallback = {on_demand};
  StepTask task(nullptr, o, {reserved});
  int advances = 0;
  Outcome out = RunOnFakeTime(task, env, &advances);
  EXPECT_EQ(out.kind, Outcome::Kind::kDone) << out.status.ToString();
  EXPECT_EQ(calls, (std::vector<std::string>{"create reserved", "delete reserved", "create on-demand",
                                             "delete on-demand", "create spot"}));
  EXPECT_EQ(task.fell_back(), 2);
}

// The last rung stocks out too: cleaned up, and the task waits for capacity.
TEST(StepTask, TheLastRungsStockoutWaitsForCapacity) {
  FakeEnv env;
  StepTaskOptions o;
  o.clock = &env;
  std::vector<std::string> calls;
  Step spot = Immediate("create spot", true, &calls);
  spot.on_stockout = {Immediate("delete spot", false, &calls)};
  Step reserved = Immediate("create reserved", true, &calls);
  reserved.on_stockout = {Immediate("delete reserved", false, &calls)};
  reserved.fallback = {spot};
  StepTask task(nullptr, o, {reserved});
  int advances = 0;
  Outcome out = RunOnFakeTime(task, env, &advances);
  EXPECT_EQ(out.kind, Outcome::Kind::kWaitingForCapacity);
  EXPECT_NE(out.status.message().find("create spot"), std::string::npos) << out.status.ToString();
  EXPECT_EQ(calls, (std::vector<std::string>{"create reserved", "delete reserved", "create spot", "delete spot"}));
}

}  // namespace
}  // namespace tpu::apply
