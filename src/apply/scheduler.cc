// Scheduler: the event loop that orders tasks by lane, group and dependency,
// keeps timers for tasks that wait, and hands Advance() calls to a fixed
// worker pool.
#include "apply/scheduler.h"

#include <algorithm>
#include <exception>

namespace tpu::apply {

const char* StateName(TaskResult::State s) {
  switch (s) {
    case TaskResult::State::kPending: return "pending";
    case TaskResult::State::kRunning: return "running";
    case TaskResult::State::kDone: return "done";
    case TaskResult::State::kFailed: return "failed";
    case TaskResult::State::kWaitingForCapacity: return "waiting-for-capacity";
    case TaskResult::State::kSkipped: return "skipped";
    case TaskResult::State::kCancelled: return "cancelled";
  }
  return "unknown";
}

namespace {
bool Finished(TaskResult::State s) {
  return s != TaskResult::State::kPending && s != TaskResult::State::kRunning;
}
}  // namespace

Scheduler::Scheduler(Options options, Observer observer)
    : options_(options), observer_(std::move(observer)) {
  options_.parallelism = std::max(1, options_.parallelism);
  options_.threads = std::max(1, options_.threads);
  options_.group_limit = std::max(1, options_.group_limit);
}

Scheduler::~Scheduler() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  worker_cv_.notify_all();
  for (auto& t : workers_)
    if (t.joinable()) t.join();
}

void Scheduler::Add(TaskSpec spec, std::unique_ptr<Task> task) {
  std::lock_guard<std::mutex> l(mu_);
  Entry e;
  e.result.id = spec.id;
  e.result.lane = spec.lane;
  e.result.group = spec.group;
  e.result.description = spec.description;
  e.spec = std::move(spec);
  e.task = std::move(task);
  size_t index = entries_.size();
  by_id_[e.spec.id] = index;
  if (!e.spec.lane.empty()) {
    auto& lane = lanes_[e.spec.lane];
    e.lane_position = lane.size();
    lane.push_back(index);
    lane_next_.emplace(e.spec.lane, 0);
  }
  if (!e.spec.group.empty()) {
    Group& g = groups_[e.spec.group];
    g.limit = options_.group_limit;
    g.members.push_back(index);
  }
  entries_.push_back(std::move(e));
}

int Scheduler::peak_group_active(const std::string& group) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = groups_.find(group);
  return it == groups_.end() ? 0 : it->second.peak;
}

int Scheduler::group_limit(const std::string& group) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = groups_.find(group);
  return it == groups_.end() ? options_.group_limit : it->second.limit;
}

std::vector<TaskResult> Scheduler::Snapshot() const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<TaskResult> out;
  out.reserve(entries_.size());
  for (const auto& e : entries_) out.push_back(e.result);
  return out;
}

void Scheduler::Cancel() {
  {
    // Under the lock, so the loop cannot miss the wake-up between its check and its wait.
    std::lock_guard<std::mutex> l(mu_);
    cancelled_ = true;
  }
  loop_cv_.notify_all();
}

void Scheduler::NotifyLocked(size_t i) {
  if (observer_) observer_(entries_[i].result);
}

void Scheduler::ReleaseLocked(size_t i) {
  --active_;
  if (saturated_) {
    // A slot freed while tasks waited for one: look at every task, in order.
    saturated_ = false;
    scan_all_ = true;
  }
  if (Group* g = entries_[i].group) {
    --g->active;
    // Its tasks that waited for room may start now.
    for (size_t j : g->members)
      if (entries_[j].result.state == TaskResult::State::kPending) candidates_.push_back(j);
  }
}

void Scheduler::ThrottleLocked(size_t i, std::chrono::milliseconds delay) {
  Entry& e = entries_[i];
  e.result.state = TaskResult::State::kPending;
  ++e.result.throttled;
  // The cluster holds fewer operations than we thought: halve our limit.
  if (e.group) e.group->limit = std::max(1, e.group->limit / 2);
  ReleaseLocked(i);
  e.not_before = Clock::now() + delay;
  timers_.push({e.not_before, i, /*wake=*/true});
  NotifyLocked(i);
}

void Scheduler::FinishLocked(size_t i, TaskResult::State state, Status status) {
  Entry& e = entries_[i];
  bool was_running = e.result.state == TaskResult::State::kRunning;
  e.result.state = state;
  e.result.status = std::move(status);
  e.result.finished = Clock::now();
  if (was_running) ReleaseLocked(i);
  --unfinished_;
  if (e.lane) {
    // The lane moves on past every finished task at its head.
    const auto& lane = *e.lane;
    size_t& next = *e.lane_next;
    while (next < lane.size() && Finished(entries_[lane[next]].result.state)) ++next;
    if (next < lane.size()) candidates_.push_back(lane[next]);
  }
  if (i < dependents_.size())
    for (size_t d : dependents_[i]) candidates_.push_back(d);
  NotifyLocked(i);
}

bool Scheduler::ReadyLocked(size_t i) const {
  const Entry& e = entries_[i];
  if (e.result.state != TaskResult::State::kPending) return false;
  if (active_ >= options_.parallelism) return false;
  for (const auto& dep : e.spec.after) {
    auto it = by_id_.find(dep);
    if (it == by_id_.end()) continue;  // reported as failed in Run()
    if (entries_[it->second].result.state != TaskResult::State::kDone) return false;
  }
  if (e.lane && *e.lane_next != e.lane_position) return false;
  if (e.group && e.group->active >= e.group->limit) return false;  // its release re-queues it
  if (e.not_before != Clock::time_point{} && Clock::now() < e.not_before) return false;  // its wake timer does
  return true;
}

bool Scheduler::SkipIfDependencyFailedLocked(size_t i) {
  const Entry& e = entries_[i];
  for (const auto& dep : e.spec.after) {
    auto it = by_id_.find(dep);
    if (it == by_id_.end()) {
      FinishLocked(i, TaskResult::State::kFailed, Status::Internal("depends on unknown task " + dep));
      return true;
    }
    const TaskResult& d = entries_[it->second].result;
    if (Finished(d.state) && d.state != TaskResult::State::kDone) {
      FinishLocked(i, TaskResult::State::kSkipped,
                   Status::FailedPrecondition("not run: " + d.description + " " + StateName(d.state)));
      return true;
    }
  }
  return false;
}

void Scheduler::StartLocked(size_t i) {
  Entry& e = entries_[i];
  e.result.state = TaskResult::State::kRunning;
  if (e.result.started == Clock::time_point{}) e.result.started = Clock::now();
  ++active_;
  peak_active_ = std::max(peak_active_, active_);
  if (e.group) e.group->peak = std::max(e.group->peak, ++e.group->active);
  NotifyLocked(i);
  DispatchLocked(i);
}

void Scheduler::StartReadyLocked() {
  if (scan_all_) {
    scan_all_ = false;
    // A dependency that ended badly means this task will never run.
    for (size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i].result.state == TaskResult::State::kPending) SkipIfDependencyFailedLocked(i);
    size_t i = 0;
    for (; i < entries_.size() && active_ < options_.parallelism; ++i)
      if (ReadyLocked(i)) StartLocked(i);
    if (active_ >= options_.parallelism && i < entries_.size()) saturated_ = true;
    candidates_.clear();  // every task was just looked at
    return;
  }
  while (!candidates_.empty()) {
    // In task order, as a full scan would start them.
    std::vector<size_t> batch;
    batch.swap(candidates_);
    std::sort(batch.begin(), batch.end());
    batch.erase(std::unique(batch.begin(), batch.end()), batch.end());
    for (size_t i : batch) {
      if (entries_[i].result.state != TaskResult::State::kPending) continue;
      if (SkipIfDependencyFailedLocked(i)) continue;  // its own finish queues its dependents
      if (active_ >= options_.parallelism) {
        saturated_ = true;  // a slot's release rescans everything
        continue;
      }
      if (ReadyLocked(i)) StartLocked(i);
    }
    if (scan_all_) return StartReadyLocked();  // a skip freed a slot of a saturated run
  }
}

void Scheduler::DispatchLocked(size_t i) {
  runnable_.push(Job{i, nullptr});
  ++in_flight_;
  worker_cv_.notify_one();
}

int Scheduler::peak_calls_in_flight() const {
  std::lock_guard<std::mutex> l(mu_);
  return peak_calls_in_flight_;
}

void Scheduler::SubmitCall(size_t i, std::shared_ptr<PendingCall> call) {
  {
    std::lock_guard<std::mutex> l(mu_);
    peak_calls_in_flight_ = std::max(peak_calls_in_flight_, ++calls_in_flight_);
  }
  if (call->start) {
    auto start = std::move(call->start);
    start([this, i](std::function<Outcome()> resume) {
      std::lock_guard<std::mutex> l(mu_);
      --calls_in_flight_;
      runnable_.push(Job{i, std::move(resume)});
      worker_cv_.notify_one();
    });
    return;
  }
  http::HttpTransport* transport = call->transport;
  http::HttpRequest request = std::move(call->request);
  // The answer arrives on the transport's loop thread (or, from a blocking
  // transport, on this one): only queue its continuation for a worker.
  transport->Submit(std::move(request), [this, i, call = std::move(call)](Result<http::HttpResponse> r) {
    std::lock_guard<std::mutex> l(mu_);
    --calls_in_flight_;
    runnable_.push(Job{i, [call, r = std::move(r)]() mutable { return call->then(std::move(r)); }});
    worker_cv_.notify_one();
  });
}

void Scheduler::WorkerLoop() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    worker_cv_.wait(l, [&] { return stopping_ || !runnable_.empty(); });
    if (runnable_.empty()) return;  // stopping
    Job job = std::move(runnable_.front());
    runnable_.pop();
    Task* task = entries_[job.index].task.get();
    l.unlock();
    Outcome out;
    if (cancelled_ && !job.resume) {
      out = Outcome::Failed(Status::DeadlineExceeded("cancelled"));
    } else {
      // A request's answer is taken in even after a cancel: it may say an
      // operation started.
      try {
        out = job.resume ? job.resume() : task->Advance();
      } catch (const std::exception& ex) {
        out = Outcome::Failed(Status::Internal(std::string("unexpected exception: ") + ex.what()));
      }
    }
    if (out.kind == Outcome::Kind::kCall) {
      if (cancelled_) {
        out = Outcome::Failed(Status::DeadlineExceeded("cancelled"));
      } else if (!out.call || (!out.call->start && (!out.call->transport || !out.call->then))) {
        out = Outcome::Failed(Status::Internal("a task asked for a call without a transport or continuation"));
      } else {
        {
          // What the outcome says besides its call: a note, an operation started.
          std::lock_guard<std::mutex> g(mu_);
          NoteCallLocked(job.index, out);
        }
        SubmitCall(job.index, std::move(out.call));
        l.lock();
        continue;  // still in flight: the continuation's outcome counts
      }
    }
    l.lock();
    outcomes_.emplace(job.index, std::move(out));
    loop_cv_.notify_all();
  }
}

void Scheduler::NoteCallLocked(size_t i, const Outcome& out) {
  Entry& e = entries_[i];
  if (!out.note.empty() && out.note != e.result.note) {
    e.result.note = out.note;
    NotifyLocked(i);
  }
  // An operation started: the group grows its limit back a step.
  if (out.call_accepted && e.group) e.group->limit = std::min(options_.group_limit, e.group->limit + 1);
}

void Scheduler::HandleOutcomeLocked(size_t i, Outcome out) {
  Entry& e = entries_[i];
  ++e.result.advances;
  NoteCallLocked(i, out);
  switch (out.kind) {
    case Outcome::Kind::kDone:
      FinishLocked(i, TaskResult::State::kDone, Status::OK());
      break;
    case Outcome::Kind::kFailed:
      FinishLocked(i, cancelled_ ? TaskResult::State::kCancelled : TaskResult::State::kFailed, out.status);
      break;
    case Outcome::Kind::kWaitingForCapacity:
      FinishLocked(i, TaskResult::State::kWaitingForCapacity, out.status);
      break;
    case Outcome::Kind::kAgain:
      timers_.push({Clock::now() + out.delay, i});
      break;
    case Outcome::Kind::kThrottled:
      ThrottleLocked(i, out.delay);
      break;
    case Outcome::Kind::kCall:  // workers send calls; never an outcome
      FinishLocked(i, TaskResult::State::kFailed, Status::Internal("unsent call"));
      break;
  }
}

std::vector<TaskResult> Scheduler::Run() {
  std::unique_lock<std::mutex> l(mu_);
  unfinished_ = entries_.size();
  dependents_.assign(entries_.size(), {});
  for (size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = entries_[i];
    for (const auto& dep : e.spec.after)
      if (auto it = by_id_.find(dep); it != by_id_.end()) dependents_[it->second].push_back(i);
    if (!e.spec.lane.empty()) {
      e.lane = &lanes_.at(e.spec.lane);
      e.lane_next = &lane_next_.at(e.spec.lane);
    }
    if (!e.spec.group.empty()) e.group = &groups_.at(e.spec.group);
  }
  scan_all_ = true;
  for (int t = 0; t < options_.threads; ++t) workers_.emplace_back([this] { WorkerLoop(); });
  while (unfinished_ > 0) {
    while (!outcomes_.empty()) {
      auto [i, out] = std::move(outcomes_.front());
      outcomes_.pop();
      --in_flight_;
      HandleOutcomeLocked(i, std::move(out));
    }
    if (cancelled_) {
      // Tasks on timers or not started stop here; ones inside a worker finish
      // their call first, so no request is cut off mid-flight.
      while (!timers_.empty()) {
        Timer t = timers_.top();
        timers_.pop();
        // A throttled task's wake-up: the task is pending, cancelled below.
        if (!t.wake)
          FinishLocked(t.index, TaskResult::State::kCancelled, Status::DeadlineExceeded("cancelled while waiting"));
      }
      for (size_t i = 0; i < entries_.size(); ++i)
        if (entries_[i].result.state == TaskResult::State::kPending)
          FinishLocked(i, TaskResult::State::kCancelled, Status::DeadlineExceeded("cancelled"));
      if (in_flight_ == 0) break;
    } else {
      auto now = Clock::now();
      while (!timers_.empty() && timers_.top().when <= now) {
        Timer t = timers_.top();
        timers_.pop();
        if (t.wake) candidates_.push_back(t.index);
        else DispatchLocked(t.index);
      }
      StartReadyLocked();
      if (unfinished_ == 0) break;
      if (in_flight_ == 0 && timers_.empty()) {
        // Nothing runs and nothing can start: the remaining tasks wait on each
        // other (a dependency against lane order). Fail them rather than hang.
        for (size_t i = 0; i < entries_.size(); ++i)
          if (entries_[i].result.state == TaskResult::State::kPending)
            FinishLocked(i, TaskResult::State::kFailed,
                         Status::Internal("dependency cycle between lane order and dependencies"));
        break;
      }
    }
    if (!outcomes_.empty()) continue;
    if (timers_.empty() || cancelled_) {
      loop_cv_.wait(l, [&] { return !outcomes_.empty() || (cancelled_ && in_flight_ == 0) ||
                                    (cancelled_ && !timers_.empty()); });
    } else {
      Clock::time_point when = timers_.top().when;
      loop_cv_.wait_until(l, when, [&] { return !outcomes_.empty() || cancelled_.load(); });
    }
  }
  stopping_ = true;
  worker_cv_.notify_all();
  l.unlock();
  for (auto& t : workers_) t.join();
  workers_.clear();
  std::vector<TaskResult> out;
  out.reserve(entries_.size());
  for (const auto& e : entries_) out.push_back(e.result);
  return out;
}

}  // namespace tpu::apply
