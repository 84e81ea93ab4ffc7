// The lines of apply's progress display, as plain text: tasks grouped into
// lanes (a GKE cluster, or a project's Compute objects), one line per lane in
// flight, one permanent line per finished lane, and the total line. Pure
// functions of a scheduler snapshot and `now`; progress.h draws them.
//
// Widths are counted in terminal columns, one per UTF-8 code point: every
// character these lines hold (names, "…", "✓") is one column wide.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "apply/scheduler.h"

namespace tpu::apply {

using SteadyTime = std::chrono::steady_clock::time_point;

// One lane's tasks, in the order they were added.
struct LaneView {
  std::string key;   // the cluster (the scheduler's group, "gke:P/L/C"), or "compute:P" for Compute tasks
  std::string name;  // what the display calls it: "c1", or "proj/c1" when two lanes share "c1"
  std::vector<const TaskResult*> tasks;

  int Finished() const;  // tasks in a final state
  bool Started() const;  // any task ran or finished
  bool Done() const { return Finished() == static_cast<int>(tasks.size()); }
  bool AllSucceeded() const;
  SteadyTime FirstStart() const;
  SteadyTime LastFinish() const;
};

// Groups `tasks` into lanes in order of each lane's first task. The views
// point into `tasks`, which must outlive them.
std::vector<LaneView> GroupLanes(const std::vector<TaskResult>& tasks);

// "create", "v6e-0" for a task "create nodePool:P/L/C/v6e-0"; "await",
// "operation-…" for an earlier run's operation.
struct ActionLabel {
  std::string verb;
  std::string name;
};
ActionLabel LabelOf(const TaskResult& t);

// What a running task waits for, without the resource the line already names:
// "waiting for operation-1", "delete: waiting for operation-2",
// "retrying (429 …)".
std::string WaitText(const TaskResult& t);

// "4.2s", "1m02s", "2h03m".
std::string Elapsed(std::chrono::steady_clock::duration d);

// Cuts `text` to at most `columns` columns, ending in "…" when cut.
std::string FitColumns(const std::string& text, int columns);
int Columns(const std::string& text);

// A lane in flight, fitted to `columns`:
// "c1  create v6e-0, v6e-1 +3  waiting for 5 operations  1m02s  4/16".
// The lane's name, elapsed time and count are kept; the actions and what they
// wait for are cut first. `name_width` pads the name so lanes line up.
std::string LaneLine(const LaneView& lane, SteadyTime now, int name_width, int columns);

// The permanent line of a finished lane, without its mark:
// "c1  create v5p-multislice-0  4m12s", "c1  14 created, 1 failed  2m01s".
std::string FinishedLaneText(const LaneView& lane);

// "Applying: 12/40 done, 5 in flight, 1 failed  2m14s".
std::string TotalLine(const std::vector<TaskResult>& tasks, SteadyTime start, SteadyTime now);

}  // namespace tpu::apply
