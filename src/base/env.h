// The program's one seam to the machine it runs on, in the spirit of
// LevelDB's Env: time and sleeping (Clock), whole-file reads and environment
// variables. Production code reads them through Env::Default(); tests hand a
// FakeEnv (base/fake_env.h) to the code they test, so nothing touches the real
// clock, disk or process environment unless the test means it to.
// What stays outside the seam, and why: docs/architecture.md, "The environment".
#pragma once

#include <optional>
#include <string>

#include "base/clock.h"
#include "base/status.h"

namespace tpu {

class Env : public Clock {
 public:
  // The whole file. NotFound when there is no such file, IoError when it
  // cannot be read; the message names the path and the system's reason.
  virtual Result<std::string> ReadFile(const std::string& path) const = 0;
  // An environment variable; nullopt when it is not set.
  virtual std::optional<std::string> Var(const std::string& name) const = 0;

  // The machine: the system clocks, the disk, the process environment.
  // Thread-safe; lives for the whole program.
  static Env& Default();
};

// s without its leading and trailing spaces, tabs and line ends: what a
// secret or token read from a file or variable is taken to be.
std::string TrimSpace(const std::string& s);

}  // namespace tpu
