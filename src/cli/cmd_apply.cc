// `tpu-provisioner apply [PLANFILE]`: computes a plan (or reads one saved with
// `plan -out`, refused when live state moved since), shows it, asks before
// destroying anything, and executes it with per-cluster lanes (src/apply/).
//
// Exit codes: 0 applied (or nothing to do), 1 error (a failed or skipped
// action, a blocked or refused target, a refused confirmation), 3 every action
// that did not apply is waiting for capacity (stockout; rerun or let `watch` retry).
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <pthread.h>
#include <sstream>
#include <thread>

#include <spdlog/spdlog.h>

#include "apply/executor.h"
#include "apply/progress.h"
#include "cli/commands.h"
#include "cli/plan_run.h"
#include "plan/fingerprint.h"
#include "plan/plan_json.h"
#include "plan/render_text.h"

namespace tpu::cli {
namespace {

struct ApplyFlags {
  PlanRunOptions run;
  std::vector<std::string> targets;
  std::string plan_file;
  bool auto_approve = false;
  int parallelism = 16;
  int poll_initial_ms = 100;
  int poll_max_ms = 15000;
  int retry_deadline_s = 900;
  int retry_base_ms = 1000;
  int cluster_operations = 5;
};

bool HasDestructive(const plan::Plan& p) {
  for (const auto& t : p.targets)
    if (t.executable())
      for (const auto& a : t.actions)
        if (a.destructive()) return true;
  return false;
}

// Reads "yes" from a terminal; anything else declines.
bool Confirm() {
  std::fprintf(stderr,
               "\nThis plan destroys TPU capacity (replacements and deletions above).\n"
               "Do you want to perform these actions? Only 'yes' will be accepted.\n"
               "  Enter a value: ");
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "yes";
}

// SIGINT/SIGTERM cancel the executor: running operations are left to the next
// run, which finds them through the operations list. The signals are blocked
// before any thread starts and taken by sigwait() on one thread, so no work
// happens in a signal handler.
class InterruptWatcher {
 public:
  InterruptWatcher() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGUSR2);  // our own "stop watching"
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  }
  void Watch(apply::Executor* executor) {
    thread_ = std::thread([this, executor] {
      int sig = 0;
      while (sigwait(&set_, &sig) == 0) {
        if (sig == SIGUSR2) return;
        spdlog::warn("interrupted: not starting new actions; operations in flight are left to "
                     "the next run");
        executor->Cancel();
      }
    });
  }
  ~InterruptWatcher() {
    if (thread_.joinable()) {
      pthread_kill(thread_.native_handle(), SIGUSR2);
      thread_.join();
    }
  }

 private:
  sigset_t set_;
  std::thread thread_;
};

Result<plan::Plan> ReadPlanFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(path + ": cannot read the saved plan");
  std::stringstream ss;
  ss << in.rdbuf();
  auto p = plan::PlanFromJson(ss.str());
  if (!p.ok()) return p.status().WithContext(path);
  return p;
}

int RunApply(ApplyFlags& f) {
  InterruptWatcher interrupts;  // before any thread exists
  f.run.plan.only_targets = f.targets;
  f.run.include_operations = true;
  plan::Plan plan;
  PlanRun run;
  if (!f.plan_file.empty()) {
    auto saved = ReadPlanFile(f.plan_file);
    if (!saved.ok()) {
      std::fprintf(stderr, "error: %s\n", saved.status().message().c_str());
      return 1;
    }
    // The saved plan is executed as it is; the repo is read only to know which
    // clusters the embedded emulator has.
    auto repo = LoadRepoFromDisk(f.run.repo_path);
    if (repo.ok()) run.repo = std::move(repo.value());
    auto session = CloudSession::Open(f.run.cloud, run.repo);
    if (!session.ok()) {
      std::fprintf(stderr, "error: %s\n", session.status().message().c_str());
      return 1;
    }
    run.session = std::move(session.value());
    std::vector<std::string> projects;
    for (const auto& [project, fp] : saved->live_fingerprints) projects.push_back(project);
    cloud::RefreshOptions ro;
    ro.include_operations = true;
    auto live = run.session->connection().Refresh(projects, ro);
    if (!live.ok()) {
      std::fprintf(stderr, "error: %s\n", live.status().message().c_str());
      return 1;
    }
    Status moved = plan::CheckLiveUnchanged(*saved, *live);
    if (!moved.ok()) {
      std::fprintf(stderr, "error: the saved plan is stale: %s\nRun plan again.\n",
                   moved.message().c_str());
      return 1;
    }
    run.live = std::move(live.value());
    plan = std::move(saved.value());
  } else {
    auto r = LoadRefreshPlan(f.run);
    if (!r.ok()) {
      std::fprintf(stderr, "error: %s\n", r.status().message().c_str());
      return 1;
    }
    run = std::move(r.value());
    plan = run.plan;
  }

  bool tty_out = isatty(STDOUT_FILENO);
  plan::TextOptions text;
  text.color = tty_out;
  std::fputs(plan::RenderText(plan, text).c_str(), stdout);
  std::fflush(stdout);

  bool plan_errors = plan.HasErrors();
  if (!plan.HasChanges()) return plan_errors ? 1 : 0;
  if (HasDestructive(plan) && !f.auto_approve) {
    if (!isatty(STDIN_FILENO)) {
      std::fprintf(stderr,
                   "error: the plan destroys TPU capacity and this run is not interactive; "
                   "rerun with --auto-approve to apply it\n");
      return 1;
    }
    if (!Confirm()) {
      std::fprintf(stderr, "Apply cancelled.\n");
      return 1;
    }
  }

  apply::ExecuteOptions eo;
  eo.parallelism = f.parallelism;
  eo.threads = std::min(32, std::max(4, f.parallelism / 2));
  eo.steps.poll.initial = std::chrono::milliseconds(f.poll_initial_ms);
  eo.steps.poll.max = std::chrono::milliseconds(std::max(f.poll_initial_ms, f.poll_max_ms));
  eo.steps.budget.deadline = std::chrono::seconds(f.retry_deadline_s);
  eo.steps.retry.base = std::chrono::milliseconds(f.retry_base_ms);
  eo.cluster_operations = f.cluster_operations;
  eo.steps.seed = static_cast<uint64_t>(getpid());
  for (const auto& [project, state] : run.live.projects)
    eo.running_operations.insert(eo.running_operations.end(), state.running_operations.begin(),
                                 state.running_operations.end());

  bool live_view = isatty(STDERR_FILENO);
  apply::Progress progress(stderr, live_view);
  cloud::CloudConnection& conn = run.session->connection();
  apply::Executor executor({&conn.gke(), &conn.compute(), &conn.poller()}, eo,
                           [&](const apply::TaskResult& r) { progress.OnChange(r); });
  interrupts.Watch(&executor);
  std::atomic<bool> finished{false};
  std::thread redraw;
  if (live_view) {
    redraw = std::thread([&] {
      while (!finished) {
        progress.Redraw(executor.Snapshot(), std::chrono::steady_clock::now());
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    });
  }
  apply::ApplyReport report = executor.Run(plan);
  finished = true;
  if (redraw.joinable()) redraw.join();
  progress.Finish();
  for (const auto& t : report.tasks) {
    if (t.state == apply::TaskResult::State::kFailed ||
        t.state == apply::TaskResult::State::kSkipped ||
        t.state == apply::TaskResult::State::kWaitingForCapacity)
      std::fprintf(stderr, "%s: %s: %s\n", apply::StateName(t.state), t.description.c_str(),
                   t.status.message().c_str());
  }
  std::fprintf(stdout, "\n%s\n", apply::SummaryLine(report).c_str());
  int code = report.ExitCode();
  if (code == 0 && plan_errors) code = 1;
  return code;
}

}  // namespace

void AddApplyCommand(CLI::App& app, CommandContext& ctx) {
  auto f = std::make_shared<ApplyFlags>();
  auto* cmd = app.add_subcommand("apply", "Compute a plan (or take a saved one) and execute it");
  cmd->add_option("planfile", f->plan_file, "A plan saved with `plan -out FILE`");
  cmd->add_option("--repo", f->run.repo_path, "The GitOps repository (default: .)");
  cmd->add_option("--target", f->targets, "Only this project/cluster (repeatable)");
  cmd->add_flag("--auto-approve", f->auto_approve, "Do not ask before destroying capacity");
  cmd->add_flag("--allow-mass-delete", f->run.plan.allow_mass_delete,
                "Allow deleting more than a target's maxDeletePercent of its chips");
  cmd->add_option("--parallelism", f->parallelism, "Actions in flight at once (default 16)")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--poll-initial-ms", f->poll_initial_ms,
                  "First operation poll after this long, then x1.5 each time, until operations of "
                  "the same kind have been seen finishing; later ones are polled when they are "
                  "expected done (default 100)")
      ->check(CLI::Range(1, 600000));
  cmd->add_option("--poll-max-ms", f->poll_max_ms, "Longest wait between polls (default 15000)")
      ->check(CLI::Range(1, 600000));
  cmd->add_option("--retry-deadline", f->retry_deadline_s,
                  "Seconds to keep retrying a failing call (default 900)")
      ->check(CLI::Range(1, 86400));
  cmd->add_option("--retry-base-ms", f->retry_base_ms,
                  "First retry of a failing call within this long (full jitter), doubling each time "
                  "(default 1000)")
      ->check(CLI::Range(1, 600000));
  cmd->add_option("--cluster-operations", f->cluster_operations,
                  "Node pool operations in flight per GKE cluster at most (default 5, GKE's "
                  "concurrent-operations quota; halved on a 429, grown back as operations start)")
      ->check(CLI::Range(1, 100));
  AddCloudFlags(cmd, &f->run.cloud);
  cmd->callback([f, &ctx] { ctx.exit_code = RunApply(*f); });
}

}  // namespace tpu::cli
