// Progress of an apply, for people: on a terminal, a live view redrawn in place
// (one line per busy lane: its current action, what it waits for, elapsed;
// then done/total); otherwise one plain log line per state change. And the
// final summary line. Output goes to the FILE* given; nothing here reads a clock
// except through the TaskResults' own timestamps and `now`.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "apply/executor.h"
#include "apply/scheduler.h"

namespace tpu::apply {

class Progress {
 public:
  Progress(std::FILE* out, bool live) : out_(out), live_(live) {}
  // Scheduler observer: called on each state or note change.
  void OnChange(const TaskResult& r);
  // Redraws the live view (call a few times a second from the caller's loop).
  void Redraw(const std::vector<TaskResult>& tasks, std::chrono::steady_clock::time_point now);
  // Clears the live view before the summary is printed.
  void Finish();

 private:
  std::FILE* out_;
  bool live_;
  std::mutex mu_;
  int drawn_lines_ = 0;
};

// "Apply complete: 12 applied, 1 failed, 2 waiting for capacity, 0 skipped in 41.2s."
std::string SummaryLine(const ApplyReport& report);

}  // namespace tpu::apply
