// Shared pieces of the reliability suite: the real tpu-provisioner binary run
// as a child process (to completion, or SIGKILLed at a chosen moment), and
// what the cloud emulator holds and was asked to do, read from its own state
// and its exchange record rather than through the reconciler's client, so a
// client bug cannot hide a crash bug. Waiting polls a condition with a
// deadline (daemon_process.h); nothing sleeps for a fixed time to let
// something happen.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "daemon/daemon_process.h"
#include "sim/cloud_emulator.h"
#include "source/git_fixture.h"

namespace tpu::reliability {

namespace fs = std::filesystem;
using json = nlohmann::json;
using daemon::testing::WaitUntil;
using source::testing::TempDir;

inline std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The environment every child gets: no ambient Google credentials, the test's
// metadata server, and `extra` (NAME=VALUE) on top.
inline std::vector<std::string> ChildEnvironment(const std::string& metadata_host,
                                                 const std::vector<std::string>& extra = {}) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string v = *e;
    if (v.rfind("GOOGLE_APPLICATION_CREDENTIALS=", 0) == 0 || v.rfind("HOME=", 0) == 0 ||
        v.rfind("CLOUDSDK_", 0) == 0 || v.rfind("GCE_METADATA_HOST=", 0) == 0 ||
        v.rfind("SPDLOG_LEVEL=", 0) == 0)
      continue;
    env.push_back(v);
  }
  env.push_back("HOME=/nonexistent");
  if (!metadata_host.empty()) env.push_back("GCE_METADATA_HOST=" + metadata_host);
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

// One run of the binary, stdout and stderr into `log`, stdin from /dev/null
// (so apply is never "on a terminal").
class BinaryProcess {
 public:
  BinaryProcess(const std::vector<std::string>& args, const std::vector<std::string>& env,
                fs::path log)
      : log_(std::move(log)) {
    std::vector<std::string> argv = {TPU_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      int in = open("/dev/null", O_RDONLY);
      if (fd < 0 || in < 0) _exit(127);
      dup2(in, 0);
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> a, e;
      for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
      a.push_back(nullptr);
      for (const auto& s : env) e.push_back(const_cast<char*>(s.c_str()));
      e.push_back(nullptr);
      execve(a[0], a.data(), e.data());
      _exit(127);
    }
  }
  ~BinaryProcess() {
    if (pid_ > 0 && !done_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  BinaryProcess(const BinaryProcess&) = delete;
  BinaryProcess& operator=(const BinaryProcess&) = delete;

  bool Done() {
    if (!done_ && waitpid(pid_, &status_, WNOHANG) == pid_) done_ = true;
    return done_;
  }
  // The exit code; -1 when killed by a signal or still running after `limit`.
  int Wait(std::chrono::seconds limit = std::chrono::seconds(120)) {
    if (!WaitUntil([&] { return Done(); }, limit)) return -1;
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
  }
  // SIGKILL now, unless it already ended; true when it was killed.
  bool Kill() {
    if (Done()) return false;
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
    done_ = true;
    return true;
  }
  std::string Output() const { return ReadAll(log_); }

 private:
  fs::path log_;
  pid_t pid_ = -1;
  int status_ = 0;
  bool done_ = false;
};

// One API exchange from the emulator's record file.
struct Exchange {
  std::string method, path;
  int status = 0;
};

// Reads the emulator's record file from a remembered offset, so each stage of
// a test sees only its own exchanges.
class ExchangeLog {
 public:
  explicit ExchangeLog(fs::path file) : file_(std::move(file)) {}
  const fs::path& file() const { return file_; }
  // Everything recorded since the last Mark().
  std::vector<Exchange> SinceMark() const {
    std::vector<Exchange> out;
    std::string text = ReadAll(file_);
    std::istringstream in(text.substr(std::min(mark_, text.size())));
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line, nullptr, false);
      if (!j.is_object()) continue;
      out.push_back({j.value("method", ""), j.value("path", ""), j.value("status", 0)});
    }
    return out;
  }
  void Mark() { mark_ = ReadAll(file_).size(); }

 private:
  fs::path file_;
  size_t mark_ = 0;
};

// The last path segment of a resource path, verb (":setSize") removed.
inline std::string ResourceName(const std::string& path) {
  std::string last = path.substr(path.rfind('/') + 1);
  return last.substr(0, last.find(':'));
}

// What the emulator holds now, from its own state: "gke:CLUSTER/POOL" → node
// count per pool, "mig:NAME" → targetSize, "template:NAME" and "policy:NAME" → 0
// (Compute objects of TPUNodeGroups; GKE's own "gke-…" groups left out).
inline std::map<std::string, int> Inventory(sim::CloudEmulator& emu) {
  std::map<std::string, int> out;
  json state = emu.StateSnapshot();
  for (const auto& [key, pool] : state["pools"].items()) {
    // "P/L/C/N"
    size_t n = key.rfind('/');
    size_t c = key.rfind('/', n - 1);
    out["gke:" + key.substr(c + 1)] = pool.value("nodeCount", 0);
  }
  for (const auto& [key, res] : state["compute"].items()) {
    const std::string name = ResourceName(key);
    // The instance groups behind GKE pools are the pools' own, not ours.
    if (name.rfind("gke-", 0) == 0) continue;
    if (key.find("/instanceGroupManagers/") != std::string::npos)
      out["mig:" + name] = res.value("targetSize", 0);
    else if (key.find("/instanceTemplates/") != std::string::npos)
      out["template:" + name] = 0;
    else if (key.find("/resourcePolicies/") != std::string::npos)
      out["policy:" + name] = 0;
  }
  return out;
}

// Operations the emulator has not finished yet.
inline int RunningOperations(sim::CloudEmulator& emu) {
  json state = emu.StateSnapshot();
  int n = 0;
  for (const char* kind : {"gkeOperations", "computeOperations"})
    for (const auto& [key, op] : state[kind].items())
      if (!op.value("done", false)) ++n;
  return n;
}

}  // namespace tpu::reliability
