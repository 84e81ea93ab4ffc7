// Child processes for the scenarios: the real tpu-provisioner binary (plan,
// apply, watch, sim), measured from outside with wait4(): wall time, CPU time
// (user + system), peak RSS. Output lines can be streamed to a callback with
// the moment each arrived, which is how the scenarios see "plan ready" or an
// apply's first and last action without polling the process.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"

namespace tpu::bench {

using Clock = std::chrono::steady_clock;

struct ProcessSpec {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // extra NAME=VALUE entries on top of ours
  std::string stdout_file;       // "" = /dev/null (unless streamed)
  bool stream_output = false;    // stdout and stderr lines go to the callback
};

struct ProcessUsage {
  int exit_code = -1;            // 128+N when killed by signal N
  double wall_s = 0;
  double cpu_s = 0;              // user + system, children of the child excluded
  long max_rss_kb = 0;
};

class Child {
 public:
  using LineFn = std::function<void(const std::string& line, Clock::time_point when)>;
  // `on_eof` runs on the reader thread once the output closes (the child exited).
  static Result<std::unique_ptr<Child>> Start(const ProcessSpec& spec, LineFn on_line = nullptr,
                                              std::function<void()> on_eof = nullptr);
  ~Child();  // kills (SIGKILL) and reaps a child still running

  pid_t pid() const { return pid_; }
  void Signal(int sig);
  // Blocks until the child exits; the output reader has drained by then.
  ProcessUsage Wait();
  // CPU seconds (user + system) the running child has used so far (/proc/PID/stat).
  double CpuSecondsSoFar() const;
  // Threads the running child has now (/proc/PID/status), 0 when gone.
  int ThreadsNow() const;

 private:
  Child() = default;
  pid_t pid_ = -1;
  bool reaped_ = false;
  Clock::time_point started_;
  std::thread reader_;
};

// Runs to completion.
Result<ProcessUsage> RunProcess(const ProcessSpec& spec);

}  // namespace tpu::bench
