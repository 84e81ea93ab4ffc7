// Execute: runs a Plan against the cloud (docs/architecture.md, "Apply rules").
//
// Every executable target's actions become StepTasks on one Scheduler, on
// GKE's rules (docs/emulator.md, "Concurrency"): a node pool action in its
// pool's lane (one operation per pool; a replace's delete and create in order),
// in its cluster's group (pools of a cluster together, up to the cluster's
// concurrent-operations quota, `cluster_operations`; halved on a 429 "Too many
// operations", grown back a step per accepted call); Compute actions ordered
// only by their dependencies. Operations an earlier, interrupted run (or
// anyone) left running (`running_operations`, from a refresh with
// include_operations) are awaited first — at the head of their pool's lane,
// before every action of their cluster for a cluster-level one, or before the
// action on their Compute resource — so nothing collides with them; one that
// starts meanwhile is met with 400 FAILED_PRECONDITION, which is retried.
// No local state is read or written: a rerun after kill -9 needs only the cloud.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "apply/action_steps.h"
#include "apply/scheduler.h"
#include "apply/step_task.h"
#include "plan/model.h"

namespace tpu::apply {

struct ExecuteOptions {
  int parallelism = 16;  // tasks started and unfinished at once (--parallelism)
  // Workers that prepare calls and take in their answers. Requests wait on
  // the clients' transport (the event loop), not on a worker, so this stays
  // small whatever `parallelism` is.
  int threads = 4;
  // Node pool operations in flight per GKE cluster at most: GKE's
  // concurrent-operations quota per cluster (5).
  int cluster_operations = 5;
  StepTaskOptions steps;
  std::vector<cloud::Operation> running_operations;  // not DONE, from the refresh
  // Asked before every mutating call of a target's actions ("project/cluster");
  // null: always (StepTaskOptions::may_mutate).
  std::function<bool(const std::string& target)> may_mutate;
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
  int throttled = 0;   // of them, refused by a cluster's operations quota (429)
  std::chrono::milliseconds elapsed{0};
  // 0 everything applied, 1 something failed, 3 only waiting for capacity.
  int ExitCode() const;
};

// The group of a GKE cluster ("gke:P/L/C") and the lane of one of its node
// pools ("gke:P/L/C/N").
std::string ClusterGroupOf(const std::string& project, const std::string& location,
                           const std::string& cluster);
std::string PoolLaneOf(const std::string& project, const std::string& location,
                       const std::string& cluster, const std::string& pool);

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
  // `target`: whose action it is ("project/cluster"; "" for an await, which never mutates).
  void AddTask(TaskSpec spec, std::vector<Step> steps, const std::string& target = "");
  // The await tasks of options_.running_operations that `plan` must not
  // collide with; returns their ids by the resource id (or cluster group)
  // they precede, and counts them in *awaited.
  std::map<std::string, std::vector<std::string>> AddAwaits(const plan::Plan& plan, int* awaited);
  void AddActions(const plan::Plan& plan, std::map<std::string, std::vector<std::string>>& awaits_for);

  Clients clients_;
  ExecuteOptions options_;
  Scheduler scheduler_;
  std::vector<const StepTask*> step_tasks_;
  uint64_t seed_ = 0;  // of the next StepTask's jitter
};

}  // namespace tpu::apply
