// Child processes measured with wait4 (see process.h).
#include "bench/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace tpu::bench {

Result<std::unique_ptr<Child>> Child::Start(const ProcessSpec& spec, LineFn on_line,
                                            std::function<void()> on_eof) {
  if (spec.argv.empty()) return Status::InvalidArgument("no command");
  int pipefd[2] = {-1, -1};
  if (spec.stream_output && ::pipe2(pipefd, O_CLOEXEC) != 0)
    return Status::IoError(std::string("pipe: ") + std::strerror(errno));
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  for (const auto& e : spec.env) env.push_back(e);
  std::vector<char*> argv, envp;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  std::unique_ptr<Child> child(new Child());
  child->started_ = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) return Status::IoError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_RDWR);
    ::dup2(devnull, 0);
    if (spec.stream_output) {
      ::dup2(pipefd[1], 1);
      ::dup2(pipefd[1], 2);
    } else {
      int out = spec.stdout_file.empty()
                    ? devnull
                    : ::open(spec.stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(out, 1);
      ::dup2(devnull, 2);
    }
    ::execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  child->pid_ = pid;
  if (spec.stream_output) {
    ::close(pipefd[1]);
    const int fd = pipefd[0];
    child->reader_ = std::thread([fd, on_line, on_eof] {
      std::string buf;
      char chunk[65536];
      for (;;) {
        ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        const auto when = Clock::now();
        buf.append(chunk, static_cast<size_t>(n));
        size_t start = 0;
        for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1)
          if (on_line) on_line(buf.substr(start, nl - start), when);
        buf.erase(0, start);
      }
      if (!buf.empty() && on_line) on_line(buf, Clock::now());
      ::close(fd);
      if (on_eof) on_eof();
    });
  }
  return child;
}

Child::~Child() {
  if (!reaped_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    Wait();
  }
  if (reader_.joinable()) reader_.join();
}

void Child::Signal(int sig) {
  if (!reaped_ && pid_ > 0) ::kill(pid_, sig);
}

ProcessUsage Child::Wait() {
  ProcessUsage u;
  int status = 0;
  struct rusage ru {};
  pid_t r;
  do {
    r = ::wait4(pid_, &status, 0, &ru);
  } while (r < 0 && errno == EINTR);
  reaped_ = true;
  u.wall_s = std::chrono::duration<double>(Clock::now() - started_).count();
  if (reader_.joinable()) reader_.join();
  if (r == pid_) {
    u.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    u.cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    u.max_rss_kb = ru.ru_maxrss;
  }
  return u;
}

double Child::CpuSecondsSoFar() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string f;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; fields >> f; ++i) {  // field 3 is the state
    if (i == 14) utime = std::stoull(f);
    if (i == 15) {
      stime = std::stoull(f);
      break;
    }
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

int Child::ThreadsNow() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  return 0;
}

Result<ProcessUsage> RunProcess(const ProcessSpec& spec) {
  auto child = Child::Start(spec);
  if (!child.ok()) return child.status();
  return (*child)->Wait();
}

}  // namespace tpu::bench
