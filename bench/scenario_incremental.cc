// Scenarios 3 and 5, on one `watch` daemon per request latency (dry run, so
// plans are computed and reported, nothing applied):
// 3. a one-file commit → the daemon's reconcile line for that commit ("plan
//    ready"), timed from just before the ref is written (`git update-ref`, the
//    last step of a commit; tree and commit objects are written beforehand);
// 5. then, with nothing changing, the CPU the daemon uses over the idle window.
// The daemon's log is streamed and each line timestamped as it arrives, so
// nothing here polls the daemon.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <regex>
#include <thread>

#include "bench/process.h"
#include "bench/scenarios.h"
#include "bench/sim_process.h"

namespace tpu::bench {
namespace {

// A loopback port nobody listens on now (the daemon binds it a moment later).
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

Result<std::string> Git(const std::string& repo, const std::string& args) {
  const std::string cmd = "git -C '" + repo + "' -c user.name=tpu-bench -c user.email=bench@localhost " +
                          args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return Status::IoError("popen " + cmd);
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int rc = ::pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (rc != 0) return Status::Internal("git " + args + ": " + out);
  return out;
}

struct Reconcile {
  std::string line;
  Clock::time_point when;
};

class DaemonLog {
 public:
  void OnLine(const std::string& line, Clock::time_point when) {
    std::lock_guard<std::mutex> l(mu_);
    tail_.push_back(line);
    if (tail_.size() > 5) tail_.erase(tail_.begin());
    if (line.find("reconcile revision=") == std::string::npos) return;
    seen_.push_back({line, when});
    cv_.notify_all();
  }
  void OnExit() {
    std::lock_guard<std::mutex> l(mu_);
    exited_ = true;
    cv_.notify_all();
  }
  // The daemon's last lines, for a note when it stopped early.
  std::string Tail() {
    std::lock_guard<std::mutex> l(mu_);
    std::string t;
    for (const auto& s : tail_) t += (t.empty() ? "" : " / ") + s;
    return t;
  }
  // The first reconcile line after index `from` containing `needle`.
  std::optional<Reconcile> WaitFor(size_t from, const std::string& needle, std::chrono::seconds deadline) {
    std::unique_lock<std::mutex> l(mu_);
    std::optional<Reconcile> found;
    cv_.wait_for(l, deadline, [&] {
      for (size_t i = from; i < seen_.size(); ++i)
        if (seen_[i].line.find(needle) != std::string::npos) {
          found = seen_[i];
          return true;
        }
      return exited_;
    });
    return found;
  }
  size_t count() {
    std::lock_guard<std::mutex> l(mu_);
    return seen_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Reconcile> seen_;
  std::vector<std::string> tail_;
  bool exited_ = false;
};

std::optional<double> Field(const std::string& line, const std::string& key) {
  std::smatch m;
  if (std::regex_search(line, m, std::regex(key + R"(=([0-9.]+))"))) return std::stod(m[1]);
  return std::nullopt;
}

std::optional<double> FigureValue(const Results& r, const std::string& name) {
  for (const auto& f : r.figures)
    if (f.name == name) return f.value;
  return std::nullopt;
}

// One-file commits, one after another: how long from each commit until the
// daemon logs its reconcile, the reconcile's own duration, the files parsed.
// Returns why it stopped early, or "".
std::string MeasureCommits(const BenchContext& ctx, const std::string& edited, int latency, DaemonLog& log,
                           std::vector<double>* ready_ms, std::vector<double>* reconcile_ms,
                           std::vector<double>* parsed) {
  std::string error;
  for (int i = 0; i < ctx.runs && error.empty(); ++i) {
    Status s = EditOneFile(ctx.repo, edited, "l" + std::to_string(latency) + "-r" + std::to_string(i));
    if (!s.ok()) {
      error = s.ToString();
      break;
    }
    auto add = Git(ctx.repo, "add -- '" + edited + "'");
    auto tree = add.ok() ? Git(ctx.repo, "write-tree") : add;
    auto commit = tree.ok() ? Git(ctx.repo, "commit-tree " + *tree + " -p HEAD -m 'bench: one-file change'")
                            : tree;
    if (!commit.ok()) {
      error = commit.status().ToString();
      break;
    }
    const size_t before = log.count();
    const auto t0 = Clock::now();
    if (auto ref = Git(ctx.repo, "update-ref refs/heads/main " + *commit); !ref.ok()) {
      error = ref.status().ToString();
      break;
    }
    auto seen = log.WaitFor(before, "revision=" + commit->substr(0, 7), std::chrono::seconds(600));
    if (!seen) {
      error = "no reconcile of " + *commit + ": " + log.Tail();
      break;
    }
    ready_ms->push_back(std::chrono::duration<double, std::milli>(seen->when - t0).count());
    if (auto d = Field(seen->line, "duration")) reconcile_ms->push_back(*d * 1000);
    if (auto p = Field(seen->line, "parsed")) parsed->push_back(*p);
  }
  return error;
}

void MeasureIdle(const BenchContext& ctx, Child& daemon, DaemonLog& log, const std::string& tag, Results* out) {
  const size_t before = log.count();
  const double cpu0 = daemon.CpuSecondsSoFar();
  std::this_thread::sleep_for(std::chrono::seconds(ctx.idle_seconds));
  const double cpu1 = daemon.CpuSecondsSoFar();
  const size_t woke = log.count() - before;
  auto& idle = out->Add("5 idle daemon", "idle daemon CPU" + tag, (cpu1 - cpu0) / ctx.idle_seconds * 100, "% of a core",
                        std::to_string(cpu1 - cpu0) + " s CPU over " + std::to_string(ctx.idle_seconds) +
                            " s; " + std::to_string(woke) + " reconciles in the window");
  idle.target = "< 0.5 %";
  idle.met = *idle.value < 0.5;
}

}  // namespace

void RunIncremental(const BenchContext& ctx, Results* out) {
  const std::string sc3 = "3 incremental";
  const std::string edited = EditedFile(ctx.fleet);
  bool idle_done = false;
  for (int latency : ctx.latencies) {
    const std::string tag = " (" + std::to_string(latency) + " ms)";
    const std::string state = ctx.work + "/watch-" + std::to_string(latency) + ".json";
    std::filesystem::copy_file(ctx.state, state, std::filesystem::copy_options::overwrite_existing);
    auto sim = SimProcess::Start({ctx.binary, state, ctx.work + "/sim-watch.json", latency, 200, json::array()});
    if (!sim.ok()) {
      out->Add(sc3, "commit → plan ready" + tag, std::nullopt, "ms", sim.status().ToString());
      continue;
    }
    DaemonLog log;
    ProcessSpec watch;
    watch.argv = {ctx.binary, "watch", "--repo", ctx.repo, "--dry-run", "--drift-interval", "1h",
                  "--listen", "127.0.0.1:" + std::to_string(FreePort()), "--gke-endpoint",
                  (*sim)->endpoint(), "--compute-endpoint", (*sim)->endpoint()};
    watch.env = ctx.env;
    watch.stream_output = true;
    auto daemon = Child::Start(
        watch, [&log](const std::string& l, Clock::time_point w) { log.OnLine(l, w); },
        [&log] { log.OnExit(); });
    if (!daemon.ok()) {
      out->Add(sc3, "commit → plan ready" + tag, std::nullopt, "ms", daemon.status().ToString());
      continue;
    }
    const auto started = Clock::now();
    auto first = log.WaitFor(0, "full=true", std::chrono::seconds(1800));
    if (!first) {
      out->Add(sc3, "commit → plan ready" + tag, std::nullopt, "ms", "the daemon never reconciled: " + log.Tail());
      continue;
    }
    out->Add(sc3, "daemon start → first full plan" + tag,
             std::chrono::duration<double>(first->when - started).count(), "s",
             "dry run; the daemon logged duration=" + std::to_string(Field(first->line, "duration").value_or(-1)).substr(0, 6) + " s");

    std::vector<double> ready_ms, reconcile_ms, parsed;
    const std::string error = MeasureCommits(ctx, edited, latency, log, &ready_ms, &reconcile_ms, &parsed);
    const std::string note = "median of " + std::to_string(ready_ms.size()) + " commits" +
                             (error.empty() ? "" : "; stopped: " + error);
    auto& ready = out->Add(sc3, "commit → plan ready" + tag, Median(ready_ms), "ms", note);
    ready.target = "< 50 ms";
    if (ready.value) ready.met = *ready.value < 50;
    out->Add(sc3, "daemon's own reconcile duration" + tag, Median(reconcile_ms), "ms", note);
    out->Add(sc3, "files parsed per commit" + tag, Median(parsed), "files", note);
    const auto cold = FigureValue(*out, "plan wall time" + tag);
    auto& ratio = out->Add(sc3, "cold plan / incremental" + tag,
                           cold && ready.value && *ready.value > 0
                               ? std::optional<double>(*cold * 1000 / *ready.value)
                               : std::nullopt,
                           "×", "cold plan from scenario 1 at the same latency");
    ratio.target = "≥ 50×";
    if (ratio.value) ratio.met = *ratio.value >= 50;

    if (!idle_done) {
      // Scenario 5: nothing changes now. The window is the measurement itself.
      idle_done = true;
      MeasureIdle(ctx, **daemon, log, tag, out);
    }
    (*daemon)->Signal(SIGTERM);
    (*daemon)->Wait();
  }
}

}  // namespace tpu::bench
