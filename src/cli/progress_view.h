// apply's progress display wired to the outside world: the terminal on
// stderr (its size, read before every frame; whether it rewraps lines), a
// redraw a few times a second and at once on SIGWINCH, and log lines
// (spdlog) printed above the frame instead of through it.
#pragma once

#include <cstdio>
#include <memory>

#include "apply/executor.h"
#include "apply/progress.h"
#include "cli/signal_thread.h"
#include "plan/model.h"

namespace tpu::cli {

class ProgressView {
 public:
  // Live when `fd` (the file descriptor of `out`) is a terminal.
  ProgressView(std::FILE* out, int fd);
  bool live() const { return live_; }
  // For the executor's constructor.
  apply::Scheduler::Observer Observer();
  // Runs the plan with the display; SIGWINCH is handled while it runs.
  apply::ApplyReport Run(apply::Executor& executor, const plan::Plan& plan, SignalThread& signals);

 private:
  int fd_;
  bool live_;
  std::unique_ptr<apply::Progress> progress_;
};

}  // namespace tpu::cli
