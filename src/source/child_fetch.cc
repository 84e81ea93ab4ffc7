// ChildFetcher: see child_fetch.h.
#include "source/child_fetch.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "source/credentials.h"
#include "source/git_util.h"

extern char** environ;

namespace tpu::source {
namespace {

// How often a waiting parent looks at the cancel flag.
constexpr auto kCancelPoll = std::chrono::milliseconds(50);

Status FromCode(int code, std::string message) {
  using C = Status::Code;
  switch (static_cast<C>(code)) {
    case C::kInvalidArgument: return Status::InvalidArgument(std::move(message));
    case C::kNotFound: return Status::NotFound(std::move(message));
    case C::kAlreadyExists: return Status::AlreadyExists(std::move(message));
    case C::kFailedPrecondition: return Status::FailedPrecondition(std::move(message));
    case C::kPermissionDenied: return Status::PermissionDenied(std::move(message));
    case C::kResourceExhausted: return Status::ResourceExhausted(std::move(message));
    case C::kUnavailable: return Status::Unavailable(std::move(message));
    case C::kDeadlineExceeded: return Status::DeadlineExceeded(std::move(message));
    case C::kIoError: return Status::IoError(std::move(message));
    default: return Status::Internal(std::move(message));
  }
}

}  // namespace

std::vector<std::string> ChildFetchArgs(const RemoteOptions& r) {
  std::vector<std::string> a = {"git-fetch", "--url", r.url, "--branch", r.branch, "--workdir", r.workdir};
  const GitCredentials& c = r.credentials;
  auto add = [&a](const char* flag, const std::string& v) {
    if (v.empty()) return;
    a.push_back(flag);
    a.push_back(v);
  };
  add("--git-token-file", c.token_file);
  add("--git-token-env", c.token_env);
  add("--git-username", c.username);
  add("--git-ssh-key", c.ssh_key_file);
  add("--git-known-hosts", c.ssh_known_hosts_file);
  return a;
}

std::string FormatChildFetchResult(const Result<std::string>& result) {
  std::string text = result.ok() ? *result : result.status().message();
  for (char& ch : text)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return std::to_string(static_cast<int>(result.ok() ? Status::Code::kOk : result.status().code())) + "\t" + text +
         "\n";
}

Result<std::string> ParseChildFetchResult(const std::string& output) {
  // Progress marks come first: kChildFetchProgress, one per moment data arrived.
  std::string line = output.substr(std::min(output.find_first_not_of(kChildFetchProgress), output.size()));
  size_t tab = line.find('\t');
  if (tab == std::string::npos || tab == 0) return Status::Internal("git-fetch child: unreadable answer");
  int code = std::atoi(line.substr(0, tab).c_str());
  std::string text = line.substr(tab + 1);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (code == static_cast<int>(Status::Code::kOk)) return text;
  return FromCode(code, std::move(text));
}

namespace {

// Starts `args` (args[0] the binary) with its stdout on `out_fd` and nothing
// else of ours open.
Result<pid_t> SpawnChild(std::vector<std::string> args, int out_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  // Nothing else of the daemon's (listening sockets, watches) is the child's.
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
  // The daemon blocks its signals for the signalfd; the child must die of SIGKILL
  // either way, but should not inherit a mask that hides SIGTERM from it.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0].c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Status::IoError("fetch: cannot start " + args[0] + ": " + std::strerror(rc));
  return pid;
}

}  // namespace

Status ChildFetcher::ReadAll(int fd, const std::string& where, std::string* out) {
  // An idle deadline: the child reports progress while data arrives, so a
  // large fetch that keeps moving is never cut off.
  auto deadline = std::chrono::steady_clock::now() + timeout_;
  for (;;) {
    auto now = std::chrono::steady_clock::now();
    if (cancelled_) return Status::Unavailable("fetch " + where + ": abandoned (stopping)");
    if (now >= deadline)
      return Status::DeadlineExceeded("fetch " + where + ": nothing received for " +
                                      std::to_string(timeout_.count()) + " ms (--fetch-timeout); abandoned");
    auto wait = std::min<std::chrono::milliseconds>(
        kCancelPoll, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now) +
                         std::chrono::milliseconds(1));
    pollfd p{fd, POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(wait.count()));
    if (n < 0 && errno != EINTR) return Status::IoError(std::string("fetch: poll: ") + std::strerror(errno));
    if (n <= 0) continue;
    char buf[4096];
    ssize_t got = read(fd, buf, sizeof buf);
    if (got > 0) {
      out->append(buf, static_cast<size_t>(got));
      deadline = std::chrono::steady_clock::now() + timeout_;
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    return Status::OK();  // end of the child's output
  }
}

Result<std::string> ChildFetcher::Fetch(const RemoteOptions& remote) {
  const std::string where = RedactUrl(remote.url);
  if (cancelled_) return Status::Unavailable("fetch " + where + ": stopping");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::IoError(std::string("fetch: pipe: ") + std::strerror(errno));
  std::vector<std::string> args = ChildFetchArgs(remote);
  args.insert(args.begin(), binary_);
  auto pid = SpawnChild(std::move(args), fds[1]);
  close(fds[1]);
  if (!pid.ok()) {
    close(fds[0]);
    return pid.status();
  }
  std::string out;
  Status stopped = ReadAll(fds[0], where, &out);
  close(fds[0]);
  if (!stopped.ok()) kill(*pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(*pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (!stopped.ok()) return stopped;
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0 || out.empty())
    return Status::Unavailable("fetch " + where + ": the fetch process failed (" +
                               (WIFSIGNALED(wstatus) ? "signal " + std::to_string(WTERMSIG(wstatus))
                                                     : "exit " + std::to_string(WEXITSTATUS(wstatus))) +
                               ")");
  return ParseChildFetchResult(out);
}

}  // namespace tpu::source
