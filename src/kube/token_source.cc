// Token files and exec credential plugins (client.authentication.k8s.io).
#include "kube/token_source.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

extern char** environ;

namespace tpu::kube {

Result<std::string> FileTokenSource::Token() {
  auto text = env_.ReadFile(path_);
  if (!text.ok()) return Status::IoError("cannot read token file: " + text.status().message());
  std::string token = TrimSpace(*text);
  if (token.empty()) return Status::IoError("token file " + path_ + " is empty");
  return token;
}

Result<std::string> RunCapture(const std::vector<std::string>& argv,
                               const std::vector<std::pair<std::string, std::string>>& extra_env) {
  if (argv.empty()) return Status::InvalidArgument("no command to run");
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) return Status::IoError("pipe: " + std::string(strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  posix_spawn_file_actions_addclose(&actions, err[0]);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  for (const auto& [k, v] : extra_env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(out[0]);
    close(err[0]);
    return Status::IoError("cannot run " + argv[0] + ": " + strerror(rc));
  }
  // Read both pipes until they close, so a chatty stderr cannot block stdout.
  std::string stdout_text, stderr_text;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? stdout_text : stderr_text).append(buf, n);
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return Status::Unavailable(argv[0] + " failed (exit " +
                               std::to_string(WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1) +
                               "): " + stderr_text);
  }
  return stdout_text;
}

Result<std::string> ExecTokenSource::Token() {
  std::lock_guard<std::mutex> lock(mu_);
  if (token_ && (!expiry_ || clock_.WallNow() < *expiry_)) return *token_;
  std::vector<std::string> argv = {config_.command};
  argv.insert(argv.end(), config_.args.begin(), config_.args.end());
  auto env = config_.env;
  nlohmann::json info = {{"apiVersion", config_.api_version}, {"kind", "ExecCredential"},
                         {"spec", {{"interactive", false}}}};
  env.emplace_back("KUBERNETES_EXEC_INFO", info.dump());
  ++runs_;
  auto out = RunCapture(argv, env);
  if (!out.ok()) return out.status().WithContext("exec credential plugin");
  auto cred = nlohmann::json::parse(*out, nullptr, false);
  if (!cred.is_object() || cred.value("kind", "") != "ExecCredential" ||
      !cred.contains("status") || !cred["status"].contains("token")) {
    return Status::InvalidArgument("exec credential plugin " + config_.command +
                                   ": output is not an ExecCredential with status.token");
  }
  token_ = cred["status"]["token"].get<std::string>();
  expiry_.reset();
  if (cred["status"].contains("expirationTimestamp")) {
    WallTime t;
    if (ParseTime(cred["status"]["expirationTimestamp"].get<std::string>(), &t)) expiry_ = t;
  }
  return *token_;
}

void ExecTokenSource::Invalidate() {
  std::lock_guard<std::mutex> lock(mu_);
  token_.reset();
}

}  // namespace tpu::kube
