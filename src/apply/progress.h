// Progress of an apply, for people.
//
// On a terminal (`live`), a frame redrawn in place: one line per lane in
// flight (the cluster; its actions in flight; what they wait for; elapsed;
// done/total), then a total line. Every line is cut to the terminal's width,
// so each takes exactly one screen row and the redraw (cursor up by rows,
// clear to the end of the screen) never leaves copies behind; the frame is no
// taller than the screen. A finished lane leaves one permanent line above the
// frame ("✓ c1  create v5p-multislice-0  4m12s"). Without a terminal, one plain
// line per state change.
//
// The caller owns the outside world: it reads the window size (TIOCGWINSZ)
// and calls Resize() on SIGWINCH, and calls Redraw() a few times a second.
// Nothing here reads a clock: times come from the TaskResults and `now`.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "apply/executor.h"
#include "apply/progress_lanes.h"
#include "apply/scheduler.h"

namespace tpu::apply {

struct TerminalSize {
  int columns = 80;
  int rows = 24;
};

struct ProgressOptions {
  bool live = false;   // a terminal: redraw a frame in place
  bool color = false;  // ANSI colours (live only)
  // The terminal rewraps long lines when it narrows (tmux, VTE, kitty, …;
  // xterm and a VT100 do not): after a narrowing, the last frame is taken to
  // fill the rows its lines rewrap into.
  bool reflows = false;
  TerminalSize size;
};

class Progress {
 public:
  Progress(std::FILE* out, ProgressOptions options, SteadyTime start);
  // Scheduler observer: without a terminal, a line per state change (and per retry).
  void OnChange(const TaskResult& r);
  // Redraws the frame from a snapshot; prints lanes that finished since.
  void Redraw(const std::vector<TaskResult>& tasks, SteadyTime now);
  // The window changed size (SIGWINCH); the next Redraw() uses it.
  void Resize(TerminalSize size);
  // A line (a log message) printed above the frame, which is then redrawn.
  void PrintAbove(const std::string& line);
  // Prints the lanes not yet reported and removes the frame, before the summary.
  void Finish(const std::vector<TaskResult>& tasks, SteadyTime now);

 private:
  // Moves to the first row of the last frame and clears to the end of the screen.
  void EraseFrameLocked();
  void PrintFinishedLocked(const std::vector<LaneView>& lanes);
  std::vector<std::string> FrameLocked(const std::vector<LaneView>& lanes,
                                       const std::vector<TaskResult>& tasks, SteadyTime now) const;
  void DrawFrameLocked(const std::vector<std::string>& frame);
  std::string Paint(const std::string& s, const char* code) const;

  std::FILE* out_;
  ProgressOptions options_;
  SteadyTime start_;
  std::mutex mu_;
  std::vector<std::string> frame_;   // the lines on screen now, below everything else
  int frame_columns_ = 0;            // the width they were drawn at
  std::set<std::string> reported_;   // lanes whose permanent line is printed
  std::map<std::string, TaskResult::State> last_state_;  // plain mode: by task id
};

// "Apply complete: 12 applied, 1 failed, 2 waiting for capacity, 0 skipped in 41.2s."
std::string SummaryLine(const ApplyReport& report);

}  // namespace tpu::apply
