// Scheduler: lanes never overlap, independent lanes run together, groups are
// bounded by a limit that a throttled task halves and accepted calls grow back,
// parallelism is bounded, dependencies order and skip, waits cost timers not
// threads, cancel stops.
#include "apply/scheduler.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

namespace tpu::apply {
namespace {

using std::chrono::milliseconds;

// A task that "waits for an operation" `polls` times, then ends with `final`.
class FakeTask : public Task {
 public:
  struct Shared {
    std::mutex mu;
    std::map<std::string, int> busy;  // lane → tasks between first and last Advance
    bool overlap = false;
    std::vector<std::string> order;   // ids in completion order
  };
  FakeTask(Shared* shared, std::string id, std::string lane, int polls,
           Outcome final = Outcome::Done())
      : shared_(shared), id_(std::move(id)), lane_(std::move(lane)), polls_(polls),
        final_(std::move(final)) {}

  Outcome Advance() override {
    std::lock_guard<std::mutex> l(shared_->mu);
    if (calls_++ == 0 && !lane_.empty() && ++shared_->busy[lane_] > 1) shared_->overlap = true;
    if (calls_ <= polls_) return Outcome::Again(milliseconds(2), "polling");
    if (!lane_.empty()) --shared_->busy[lane_];
    shared_->order.push_back(id_);
    return final_;
  }

 private:
  Shared* shared_;
  std::string id_, lane_;
  int polls_;
  Outcome final_;
  int calls_ = 0;
};

void AddFake(Scheduler& s, FakeTask::Shared* sh, const std::string& id, const std::string& lane,
             int polls, std::vector<std::string> after = {}, Outcome final = Outcome::Done()) {
  s.Add({id, lane, std::move(after), "task " + id, ""},
        std::make_unique<FakeTask>(sh, id, lane, polls, std::move(final)));
}

TEST(Scheduler, LaneRunsOneTaskAtATimeInOrder) {
  FakeTask::Shared sh;
  Scheduler s({.parallelism = 16, .threads = 4});
  for (int i = 0; i < 5; ++i) AddFake(s, &sh, "a" + std::to_string(i), "cluster-a", 3);
  auto results = s.Run();
  EXPECT_FALSE(sh.overlap);
  EXPECT_EQ(sh.order, (std::vector<std::string>{"a0", "a1", "a2", "a3", "a4"}));
  for (const auto& r : results) EXPECT_EQ(r.state, TaskResult::State::kDone) << r.id;
  EXPECT_EQ(s.peak_active(), 1);
}

TEST(Scheduler, IndependentLanesRunTogether) {
  FakeTask::Shared sh;
  Scheduler s({.parallelism = 16, .threads = 2});
  for (int c = 0; c < 10; ++c)
    for (int i = 0; i < 3; ++i)
      AddFake(s, &sh, "c" + std::to_string(c) + "-" + std::to_string(i), "c" + std::to_string(c), 2);
  s.Run();
  EXPECT_FALSE(sh.overlap);
  EXPECT_EQ(s.peak_active(), 10);
}

TEST(Scheduler, ParallelismBoundsStartedTasks) {
  FakeTask::Shared sh;
  Scheduler s({.parallelism = 4, .threads = 2});
  for (int c = 0; c < 50; ++c) AddFake(s, &sh, "t" + std::to_string(c), "", 2);
  auto results = s.Run();
  EXPECT_EQ(s.peak_active(), 4);
  EXPECT_EQ(sh.order.size(), 50u);
}

TEST(Scheduler, ThousandWaitingTasksNeedOnlyThePool) {
  FakeTask::Shared sh;
  Scheduler s({.parallelism = 1000, .threads = 4});
  for (int c = 0; c < 1000; ++c) AddFake(s, &sh, "t" + std::to_string(c), "", 5);
  auto results = s.Run();
  EXPECT_EQ(s.peak_active(), 1000);  // all in flight at once, on 4 worker threads
  for (const auto& r : results) {
    EXPECT_EQ(r.state, TaskResult::State::kDone);
    EXPECT_EQ(r.advances, 6);
  }
}

// A task whose one wait is answered by someone else (a batched poll), from
// another thread, whenever that one chooses: the task holds its place, not a
// worker, and its continuation runs once on a worker.
class WaitingTask : public Task {
 public:
  using Answer = std::function<void(std::function<Outcome()>)>;
  struct Parked {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<Answer> answers;
  };
  explicit WaitingTask(Parked* parked) : parked_(parked) {}
  Outcome Advance() override {
    return Outcome::Wait([this](Answer resume) {
      std::lock_guard<std::mutex> l(parked_->mu);
      parked_->answers.push_back(std::move(resume));
      parked_->cv.notify_all();
    });
  }

 private:
  Parked* parked_;
};

TEST(Scheduler, WaitsAnsweredFromAnotherThreadInAnyOrder) {
  WaitingTask::Parked parked;
  Scheduler s({.parallelism = 100, .threads = 2});
  for (int i = 0; i < 100; ++i)
    s.Add({"w" + std::to_string(i), "", {}, "wait " + std::to_string(i), ""}, std::make_unique<WaitingTask>(&parked));
  std::thread answerer([&] {
    // Every wait parks before any is answered: 100 in flight on 2 workers.
    std::vector<WaitingTask::Answer> answers;
    {
      std::unique_lock<std::mutex> l(parked.mu);
      parked.cv.wait(l, [&] { return parked.answers.size() == 100; });
      answers.swap(parked.answers);
    }
    for (size_t i = answers.size(); i-- > 0;) {
      const bool fail = i % 10 == 0;
      answers[i]([fail] { return fail ? Outcome::Failed(Status::Unavailable("list failed")) : Outcome::Done(); });
    }
  });
  auto results = s.Run();
  answerer.join();
  int done = 0, failed = 0;
  for (const auto& r : results) {
    if (r.state == TaskResult::State::kDone) ++done;
    if (r.state == TaskResult::State::kFailed) ++failed;
  }
  EXPECT_EQ(done, 90);
  EXPECT_EQ(failed, 10);
  EXPECT_EQ(s.peak_calls_in_flight(), 100);
}

TEST(Scheduler, DependenciesOrderAcrossLanes) {
  FakeTask::Shared sh;
  Scheduler s({.parallelism = 16, .threads = 2});
  // policy → template → MIG, in no lane; a pool in a lane after the MIG.
  AddFake(s, &sh, "mig", "", 1, {"template"});
  AddFake(s, &sh, "template", "", 3, {"policy"});
  AddFake(s, &sh, "policy", "", 2);
  s.Run();
  EXPECT_EQ(sh.order, (std::vector<std::string>{"policy", "template", "mig"}));
}

TEST(Scheduler, FailedDependencySkipsDependentsOnly) {
  FakeTask::Shared sh;
  Scheduler s({.parallelism = 16, .threads = 2});
  AddFake(s, &sh, "policy", "", 1, {}, Outcome::Failed(Status::PermissionDenied("quota")));
  AddFake(s, &sh, "template", "", 1, {"policy"});
  AddFake(s, &sh, "other", "", 1);
  auto r = s.Run();
  EXPECT_EQ(r[0].state, TaskResult::State::kFailed);
  EXPECT_EQ(r[0].status.message(), "quota");
  EXPECT_EQ(r[1].state, TaskResult::State::kSkipped);
  EXPECT_EQ(r[1].status.message(), "not run: task policy failed");
  EXPECT_EQ(r[2].state, TaskResult::State::kDone);
}

TEST(Scheduler, FailureInALaneLetsTheLaneGoOn) {
  FakeTask::Shared sh;
  Scheduler s({.parallelism = 16, .threads = 2});
  AddFake(s, &sh, "a", "L", 1, {}, Outcome::Failed(Status::InvalidArgument("bad")));
  AddFake(s, &sh, "b", "L", 1);
  auto r = s.Run();
  EXPECT_EQ(r[0].state, TaskResult::State::kFailed);
  EXPECT_EQ(r[1].state, TaskResult::State::kDone);
}

TEST(Scheduler, WaitingForCapacityIsItsOwnState) {
  FakeTask::Shared sh;
  Scheduler s({.parallelism = 16, .threads = 2});
  AddFake(s, &sh, "a", "L", 1, {}, Outcome::WaitingForCapacity(Status::ResourceExhausted("GCE_STOCKOUT")));
  auto r = s.Run();
  EXPECT_EQ(r[0].state, TaskResult::State::kWaitingForCapacity);
  EXPECT_EQ(std::string(StateName(r[0].state)), "waiting-for-capacity");
}

TEST(Scheduler, DependencyAgainstLaneOrderFailsInsteadOfHanging) {
  FakeTask::Shared sh;
  Scheduler s({.parallelism = 16, .threads = 2});
  AddFake(s, &sh, "first", "L", 0, {"second"});
  AddFake(s, &sh, "second", "L", 0);
  auto r = s.Run();
  EXPECT_EQ(r[0].state, TaskResult::State::kFailed);
  EXPECT_EQ(r[1].state, TaskResult::State::kFailed);
}

// A cloud with a quota of `capacity` concurrent operations per cluster: a task's
// first call is refused (throttled) when that many run, else accepted; its
// operation then takes `polls` polls.
class QuotaTask : public Task {
 public:
  struct Cloud {
    std::mutex mu;
    int running = 0;
    int peak = 0;
    int refused = 0;
    int capacity = 2;
    std::map<std::string, int> on_pool;  // operations running per pool
    int pool_peak = 0;                   // the most ever running on one pool
  };
  QuotaTask(Cloud* cloud, int polls, std::string pool = "") : cloud_(cloud), polls_(polls), pool_(std::move(pool)) {}
  Outcome Advance() override {
    std::lock_guard<std::mutex> l(cloud_->mu);
    if (!started_) {
      if (cloud_->running >= cloud_->capacity) {
        ++cloud_->refused;
        return Outcome::Throttled(milliseconds(1), "429");
      }
      started_ = true;
      cloud_->peak = std::max(cloud_->peak, ++cloud_->running);
      cloud_->pool_peak = std::max(cloud_->pool_peak, ++cloud_->on_pool[pool_]);
      Outcome o = Outcome::Again(milliseconds(2));
      o.call_accepted = true;
      return o;
    }
    if (++polls_done_ < polls_) return Outcome::Again(milliseconds(2));
    --cloud_->running;
    --cloud_->on_pool[pool_];
    return Outcome::Done();
  }

 private:
  Cloud* cloud_;
  int polls_;
  std::string pool_;
  int polls_done_ = 0;
  bool started_ = false;
};

// Ten pools of one cluster: five (the group's limit) at once.
TEST(Scheduler, AGroupRunsUpToItsLimitAtOnce) {
  QuotaTask::Cloud cloud;
  cloud.capacity = 100;
  Scheduler s({.parallelism = 16, .threads = 4, .group_limit = 5});
  for (int i = 0; i < 10; ++i)
    s.Add({"p" + std::to_string(i), "pool-" + std::to_string(i), {}, "create", "cluster"},
          std::make_unique<QuotaTask>(&cloud, 5));
  auto results = s.Run();
  for (const auto& r : results) EXPECT_EQ(r.state, TaskResult::State::kDone) << r.id;
  EXPECT_EQ(s.peak_group_active("cluster"), 5);
  EXPECT_EQ(cloud.peak, 5);
}

// GKE's rules with a quota of 5: ten pools, each replaced (a delete, then a
// create of the same pool name), never have more than five operations in
// flight in the cluster nor two on one pool, and do have five at once.
TEST(Scheduler, TenReplacedPoolsRunFiveAtOnceAndOneOperationPerPool) {
  QuotaTask::Cloud cloud;
  cloud.capacity = 100;  // the limit under test is the scheduler's, not the cloud's
  Scheduler s({.parallelism = 32, .threads = 4, .group_limit = 5});
  for (int i = 0; i < 10; ++i) {
    const std::string pool = "pool-" + std::to_string(i);
    s.Add({"delete " + pool, pool, {}, "delete", "cluster"}, std::make_unique<QuotaTask>(&cloud, 5, pool));
    s.Add({"create " + pool, pool, {}, "create", "cluster"}, std::make_unique<QuotaTask>(&cloud, 5, pool));
  }
  auto results = s.Run();
  ASSERT_EQ(results.size(), 20u);
  for (const auto& r : results) EXPECT_EQ(r.state, TaskResult::State::kDone) << r.id;
  EXPECT_EQ(cloud.peak, 5);       // five at some moment, never six
  EXPECT_EQ(cloud.pool_peak, 1);  // never two on one pool
  EXPECT_EQ(s.peak_group_active("cluster"), 5);
}

// The cloud takes two at a time: the tasks refused give their place back, the
// group's limit halves, and everything still finishes, never more than two in
// the cloud at once.
TEST(Scheduler, ThrottledTasksYieldAndTheGroupLimitFollowsTheCloud) {
  QuotaTask::Cloud cloud;
  cloud.capacity = 2;
  Scheduler s({.parallelism = 16, .threads = 4, .group_limit = 5});
  for (int i = 0; i < 10; ++i)
    s.Add({"p" + std::to_string(i), "pool-" + std::to_string(i), {}, "create", "cluster"},
          std::make_unique<QuotaTask>(&cloud, 3));
  auto results = s.Run();
  int throttled = 0;
  for (const auto& r : results) {
    EXPECT_EQ(r.state, TaskResult::State::kDone) << r.id;
    throttled += r.throttled;
  }
  EXPECT_GT(cloud.refused, 0);
  EXPECT_EQ(throttled, cloud.refused);
  EXPECT_EQ(cloud.peak, 2);
  EXPECT_LE(s.group_limit("cluster"), 5);
}

class ForeverTask : public Task {
 public:
  explicit ForeverTask(std::atomic<int>* calls) : calls_(calls) {}
  Outcome Advance() override {
    ++*calls_;
    return Outcome::Again(milliseconds(1));
  }
  std::atomic<int>* calls_;
};

TEST(Scheduler, CancelStopsWaitingTasks) {
  std::atomic<int> calls{0};
  Scheduler s({.parallelism = 16, .threads = 2});
  for (int i = 0; i < 3; ++i)
    s.Add({"t" + std::to_string(i), "", {}, "forever", ""}, std::make_unique<ForeverTask>(&calls));
  std::thread canceller([&] {
    while (calls.load() < 10) std::this_thread::yield();
    s.Cancel();
  });
  auto r = s.Run();
  canceller.join();
  for (const auto& t : r) EXPECT_EQ(t.state, TaskResult::State::kCancelled);
}

TEST(Scheduler, ObserverSeesEveryStateChange) {
  FakeTask::Shared sh;
  std::vector<std::string> seen;
  Scheduler s({.parallelism = 16, .threads = 1},
              [&](const TaskResult& r) { seen.push_back(r.id + ":" + StateName(r.state)); });
  AddFake(s, &sh, "a", "", 0);
  s.Run();
  EXPECT_EQ(seen, (std::vector<std::string>{"a:running", "a:done"}));
}

}  // namespace
}  // namespace tpu::apply
