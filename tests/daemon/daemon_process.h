// Runs the real tpu-provisioner binary as `watch` for end-to-end tests: its
// output goes to a log file; the HTTP port is read from its "listening on"
// log line; a fake metadata server hands it a token (the in-test emulator
// accepts any), so the binary talks to the emulator exactly as to Google.
// Waiting is polling with a deadline, never a fixed sleep.
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "metadata_server.h"

extern char** environ;

namespace tpu::daemon::testing {

using json = nlohmann::json;
inline constexpr auto kDeadline = std::chrono::seconds(60);

// Polls `ready` until it holds or the deadline passes; false on timeout.
inline bool WaitUntil(const std::function<bool()>& ready, std::chrono::seconds limit = kDeadline) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!ready()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

class DaemonProcess {
 public:
  // Starts `tpu-provisioner watch <args>` with the cloud endpoints at `cloud_endpoint`.
  DaemonProcess(std::vector<std::string> args, const std::string& log_path,
                const std::string& cloud_endpoint, const std::string& metadata_host)
      : log_path_(log_path) {
    std::vector<std::string> argv = {TPU_BINARY, "watch", "--gke-endpoint", cloud_endpoint + "/",
                                     "--compute-endpoint", cloud_endpoint + "/"};
    // A port the test chose (a log level that hides the "listening on" line), else any.
    auto listen = std::find(args.begin(), args.end(), "--listen");
    if (listen == args.end()) argv.insert(argv.end(), {"--listen", "127.0.0.1:0"});
    else if (listen + 1 != args.end()) port_ = std::stoi(listen[1].substr(listen[1].rfind(':') + 1));
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      std::string v = *e;
      if (v.rfind("GOOGLE_APPLICATION_CREDENTIALS=", 0) == 0 || v.rfind("HOME=", 0) == 0 ||
          v.rfind("CLOUDSDK_", 0) == 0 || v.rfind("GCE_METADATA_HOST=", 0) == 0)
        continue;
      env.push_back(v);
    }
    env.push_back("HOME=/nonexistent");
    env.push_back("GCE_METADATA_HOST=" + metadata_host);
    pid_ = fork();
    if (pid_ == 0) {
      FILE* log = std::fopen(log_path.c_str(), "w");
      if (!log) _exit(127);
      dup2(fileno(log), 1);
      dup2(fileno(log), 2);
      std::vector<char*> a, e;
      for (auto& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      for (auto& s : env) e.push_back(s.data());
      e.push_back(nullptr);
      execve(a[0], a.data(), e.data());
      _exit(127);
    }
  }
  ~DaemonProcess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (::testing::Test::HasFailure()) std::fprintf(stderr, "--- daemon log ---\n%s\n", Log().c_str());
  }

  std::string Log() const {
    std::ifstream in(log_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // The port from the "listening on 127.0.0.1:PORT" line; 0 when it never came.
  int Port() {
    if (port_) return port_;
    static const std::regex re("listening on 127\\.0\\.0\\.1:([0-9]+)");
    WaitUntil([&] {
      std::smatch m;
      std::string log = Log();
      if (std::regex_search(log, m, re)) port_ = std::stoi(m[1]);
      return port_ != 0 || Exited();
    });
    return port_;
  }

  httplib::Result Get(const std::string& path) {
    httplib::Client c("127.0.0.1", Port());
    return c.Get(path.c_str());
  }

  // GET /status as JSON (null when unreachable).
  json Status() {
    auto r = Get("/status");
    if (!r || r->status != 200) return nullptr;
    return json::parse(r->body, nullptr, false);
  }

  // The /status entry of `key`, or null.
  json Target(const std::string& key) {
    json s = Status();
    if (!s.is_object()) return nullptr;
    for (const auto& t : s["targets"])
      if (t["target"] == key) return t;
    return nullptr;
  }

  bool Exited() {
    if (exited_) return true;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      exit_status_ = status;
    }
    return exited_;
  }

  void Signal(int signo) { kill(pid_, signo); }
  pid_t pid() const { return pid_; }

  // Waits for the process to end; its raw wait status, or nullopt on timeout.
  std::optional<int> WaitExit() {
    if (!WaitUntil([&] { return Exited(); })) return std::nullopt;
    return exit_status_;
  }

 private:
  std::string log_path_;
  pid_t pid_ = -1;
  int port_ = 0;
  bool exited_ = false;
  int exit_status_ = 0;
};

}  // namespace tpu::daemon::testing
