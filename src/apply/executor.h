// Execute: runs a Plan against the cloud (DESIGN.md §6).
//
// Every executable target's actions become StepTasks on one Scheduler: node
// pool actions in their GKE cluster's lane (one operation per cluster, in plan
// order), Compute actions ordered only by their dependencies. Operations an
// earlier, interrupted run left running (`running_operations`, from a refresh
// with include_operations) are awaited first — at the head of their cluster's
// lane, or before the action on their resource — so nothing collides with them.
// No local state is read or written: a rerun after kill -9 needs only the cloud.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "apply/action_steps.h"
#include "apply/scheduler.h"
#include "apply/step_task.h"
#include "plan/model.h"

namespace tpu::apply {

struct ExecuteOptions {
  int parallelism = 16;  // tasks started and unfinished at once (--parallelism)
  int threads = 8;       // workers making API calls
  StepTaskOptions steps;
  std::vector<cloud::Operation> running_operations;  // not DONE, from the refresh
};

struct ApplyReport {
  std::vector<TaskResult> tasks;  // in execution-plan order, awaits first
  int applied = 0;
  int failed = 0;
  int waiting_for_capacity = 0;
  int skipped = 0;     // not run because something they depend on did not finish
  int cancelled = 0;
  int awaited = 0;     // operations of earlier runs waited for
  int retries = 0;     // retried API calls
  std::chrono::milliseconds elapsed{0};
  // 0 everything applied, 1 something failed, 3 only waiting for capacity.
  int ExitCode() const;
};

// The lane of a GKE cluster: "gke:P/L/C".
std::string LaneOf(const std::string& project, const std::string& location,
                   const std::string& cluster);

class Executor {
 public:
  Executor(Clients clients, ExecuteOptions options, Scheduler::Observer observer = nullptr);
  // Runs every executable, non-noop action of `plan`. Blocks until done or Cancel().
  ApplyReport Run(const plan::Plan& plan);
  // From any thread (a signal handler's thread, the daemon's shutdown): stop
  // starting work; operations already started are left to the next run.
  void Cancel();
  // Current state of every task, for progress displays.
  std::vector<TaskResult> Snapshot() const;

 private:
  Clients clients_;
  ExecuteOptions options_;
  Scheduler scheduler_;
  std::vector<const StepTask*> step_tasks_;
};

}  // namespace tpu::apply
