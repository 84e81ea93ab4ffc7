// Scheduler: runs Tasks with lanes, groups, dependencies and bounded parallelism.
//
// - A lane (a GKE node pool: GKE runs one operation per pool) runs its tasks
//   one at a time, in the order they were added.
// - A group (a GKE cluster) has a limit of tasks started and unfinished at
//   once, starting at `group_limit` (the cluster's concurrent-operations
//   quota). A task that comes back throttled (429 "Too many operations") gives
//   its place back, waits its backoff and room in the group, and halves the
//   group's limit; each accepted call grows it back one step, up to
//   `group_limit`.
// - A task starts only after every task it depends on is done; if one of them
//   fails, it is skipped with a reason naming the failed dependency.
// - At most `parallelism` tasks are started and unfinished at once; tasks
//   waiting on a timer (an operation in flight, a backoff) or on a request
//   they asked for (Outcome::kCall, sent through its transport: the event
//   loop, so it returns at once) hold their place but no thread. Advance()
//   calls and the continuations of requests run on a fixed pool of `threads`
//   workers, so the number in flight has no tie to the number of threads.
// Run() blocks the calling thread until every task has finished or been skipped,
// or Cancel() is called (then running tasks get no further Advance()).
// Thread-safety: Add() before Run(); Cancel() and Snapshot() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include "apply/task.h"

namespace tpu::apply {

struct TaskResult {
  enum class State { kPending, kRunning, kDone, kFailed, kWaitingForCapacity, kSkipped, kCancelled };
  std::string id;
  std::string lane;
  std::string group;
  std::string description;
  State state = State::kPending;
  Status status;       // why it failed / was skipped
  std::string note;    // latest progress note
  std::chrono::steady_clock::time_point started{};
  std::chrono::steady_clock::time_point finished{};
  int advances = 0;    // Advance() calls made
  int throttled = 0;   // times it came back throttled (429 Too many operations)
};

// Done, failed, waiting for capacity, skipped or cancelled: nothing more happens to it in this run.
inline bool IsFinal(TaskResult::State s) {
  return s != TaskResult::State::kPending && s != TaskResult::State::kRunning;
}

const char* StateName(TaskResult::State s);

class Scheduler {
 public:
  struct Options {
    int parallelism = 16;  // tasks started and unfinished at once
    int threads = 8;       // workers making API calls
    int group_limit = 5;   // tasks of one group started and unfinished at once, at most
  };
  // Called on the scheduler thread each time a task changes state or note.
  // It runs under the scheduler's lock: it must not call back into the Scheduler.
  using Observer = std::function<void(const TaskResult&)>;

  explicit Scheduler(Options options, Observer observer = nullptr);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // REQUIRES: ids unique; `after` names tasks added before or after, all before Run().
  void Add(TaskSpec spec, std::unique_ptr<Task> task);
  // Runs everything to the end. Returns the results in the order tasks were added.
  std::vector<TaskResult> Run();
  // Stops starting tasks and stops advancing running ones; Run() returns soon.
  void Cancel();
  // A copy of every task's current state, for progress displays and /status.
  std::vector<TaskResult> Snapshot() const;
  // Peak number of tasks started and unfinished at once, for tests and benches.
  int peak_active() const { return peak_active_; }
  // Peak number of requests submitted and not yet answered.
  int peak_calls_in_flight() const;
  // The same within one group, and the group's limit now (after Run()).
  int peak_group_active(const std::string& group) const;
  int group_limit(const std::string& group) const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Group {
    int limit = 0;   // tasks that may be started and unfinished at once now
    int active = 0;
    int peak = 0;
    std::vector<size_t> members;  // task indexes, in order
  };
  struct Entry {
    TaskSpec spec;
    std::unique_ptr<Task> task;
    TaskResult result;
    size_t lane_position = 0;  // index in its lane's FIFO
    const std::vector<size_t>* lane = nullptr;  // its lane's tasks (lanes_), null when none
    size_t* lane_next = nullptr;                // its lane's entry in lane_next_
    Group* group = nullptr;                     // its group (groups_), null when none
    Clock::time_point not_before{};             // throttled: not started again before
  };
  struct Timer {
    Clock::time_point when;
    size_t index;
    bool wake = false;  // only makes a throttled task startable again (no Advance)
    bool operator>(const Timer& o) const { return when > o.when; }
  };

  // What a worker runs next: task `index`'s Advance(), or, when set, the
  // continuation of the request it made.
  struct Job {
    size_t index;
    std::function<Outcome()> resume;
  };

  void WorkerLoop();
  // Sends task i's request; its answer comes back as a Job. Called without the lock.
  void SubmitCall(size_t i, std::shared_ptr<PendingCall> call);
  // REQUIRES: mu_ held. Takes in an outcome's note and call_accepted.
  void NoteCallLocked(size_t i, const Outcome& out);
  // Starts what can start. After the first call it looks only at the tasks a
  // finish may have made ready (the lane's next task, the finished task's
  // dependents), unless tasks were held back by the parallelism limit and a
  // slot freed: then it scans every task again, in order. A full scan per
  // event made the loop O(tasks) per poll: seconds of lock-held CPU for 2,000
  // creates.
  void StartReadyLocked();
  void StartLocked(size_t i);
  // Skips task i when a dependency ended badly (or is unknown); true if it did.
  bool SkipIfDependencyFailedLocked(size_t i);
  bool ReadyLocked(size_t i) const;
  void FinishLocked(size_t i, TaskResult::State state, Status status);
  // Task i gives its place back (throttled): pending again until `delay` passed.
  void ThrottleLocked(size_t i, std::chrono::milliseconds delay);
  // Task i's place is free: the group may start another of its tasks.
  void ReleaseLocked(size_t i);
  void HandleOutcomeLocked(size_t i, Outcome out);
  void DispatchLocked(size_t i);  // hands task i to a worker
  void NotifyLocked(size_t i);

  Options options_;
  Observer observer_;
  mutable std::mutex mu_;
  std::condition_variable loop_cv_;    // scheduler thread: outcomes, timers, cancel
  std::condition_variable worker_cv_;  // workers: runnable queue
  std::vector<Entry> entries_;
  std::map<std::string, size_t> by_id_;
  std::map<std::string, std::vector<size_t>> lanes_;  // lane → task indexes in order
  std::map<std::string, size_t> lane_next_;           // lane → position of its next task
  std::map<std::string, Group> groups_;
  std::vector<std::vector<size_t>> dependents_;       // task → tasks that list it in `after`
  std::vector<size_t> candidates_;  // tasks a finish may have made ready
  bool scan_all_ = true;            // the next StartReadyLocked looks at every task
  bool saturated_ = false;          // a task was held back by the parallelism limit
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_;
  std::queue<Job> runnable_;      // to be run by a worker
  std::queue<std::pair<size_t, Outcome>> outcomes_;
  std::vector<std::thread> workers_;
  int in_flight_ = 0;  // tasks queued for or inside a worker, or waiting for a request's answer
  int calls_in_flight_ = 0;
  int peak_calls_in_flight_ = 0;
  int active_ = 0;
  int peak_active_ = 0;
  size_t unfinished_ = 0;
  bool stopping_ = false;
  std::atomic<bool> cancelled_{false};
};

}  // namespace tpu::apply
