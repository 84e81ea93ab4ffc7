// `tpu-provisioner apply [PLANFILE]`: computes a plan (or reads one saved with
// `plan -out`, refused when live state moved since), shows it, asks for
// approval ("yes", on a terminal; --auto-approve otherwise) before any call
// that changes anything, and executes it with per-cluster lanes (src/apply/)
// under a progress display (progress_view.h).
//
// Exit codes: 0 applied (or nothing to do), 1 error (a failed or skipped
// action, a blocked or refused target, a refused confirmation), 3 every action
// that did not apply is waiting for capacity (stockout; rerun or let `watch` retry).
#include <unistd.h>

#include <cstdio>
#include <memory>

#include <spdlog/spdlog.h>

#include "apply/executor.h"
#include "apply/progress.h"
#include "base/env.h"
#include "cli/commands.h"
#include "cli/plan_run.h"
#include "cli/progress_view.h"
#include "cli/signal_thread.h"
#include "cli/terminal.h"
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
  int summary_over = plan::kDefaultSummaryOver;
  bool full = false;
  int retry_base_ms = 1000;
  int cluster_operations = 5;
};

// Terraform's question, with what the plan spends and destroys.
std::string ApprovalPrompt(const plan::Plan& p) {
  plan::Summary s = p.Summarize();
  std::string counts = std::to_string(s.create) + " to create, " + std::to_string(s.update) +
                       " to update, " + std::to_string(s.replace) + " to replace, " +
                       std::to_string(s.remove) + " to delete";
  std::string prompt = "\nDo you want to perform these actions?\n"
                       "  tpu-provisioner will perform the actions described above (" + counts + ").\n";
  if (s.chips_created)
    prompt += "  They create " + std::to_string(s.chips_created) + " TPU chips of capacity.\n";
  if (s.chips_destroyed)
    prompt += "  They destroy " + std::to_string(s.chips_destroyed) +
              " TPU chips of capacity (the replacements and deletions above).\n";
  return prompt + "  Only 'yes' will be accepted to approve.\n\n  Enter a value: ";
}

Result<plan::Plan> ReadPlanFile(const std::string& path) {
  auto text = Env::Default().ReadFile(path);
  if (!text.ok()) return text.status().WithContext("cannot read the saved plan");
  auto p = plan::PlanFromJson(*text);
  if (!p.ok()) return p.status().WithContext(path);
  return p;
}

// A saved plan (apply PLANFILE), checked against live state that must not
// have moved since it was made. false (and why, on stderr) when it cannot run.
bool LoadSavedPlan(const ApplyFlags& f, PlanRun* run, plan::Plan* plan) {
  auto saved = ReadPlanFile(f.plan_file);
  if (!saved.ok()) {
    std::fprintf(stderr, "error: %s\n", saved.status().message().c_str());
    return false;
  }
  // The saved plan is executed as it is; the repo is read only to know which
  // clusters the embedded emulator has.
  auto repo = LoadRepoFromDisk(f.run.repo_path);
  if (repo.ok()) run->repo = std::move(repo.value());
  auto session = CloudSession::Open(f.run.cloud, run->repo);
  if (!session.ok()) {
    PrintFatalError(session.status());
    return false;
  }
  run->session = std::move(session.value());
  std::vector<std::string> projects;
  for (const auto& [project, fp] : saved->live_fingerprints) projects.push_back(project);
  cloud::RefreshOptions ro;
  ro.include_operations = true;
  auto live = run->session->connection().Refresh(projects, ro);
  if (!live.ok()) {
    PrintFatalError(live.status());
    return false;
  }
  Status moved = plan::CheckLiveUnchanged(*saved, *live);
  if (!moved.ok()) {
    std::fprintf(stderr, "error: the saved plan is stale: %s\nRun plan again.\n",
                 moved.message().c_str());
    return false;
  }
  run->live = std::move(live.value());
  *plan = std::move(saved.value());
  return true;
}

// Asks on the terminal; false (and why, on stderr) unless the answer is yes.
bool Approved(const plan::Plan& plan) {
  if (!isatty(STDIN_FILENO)) {
    std::fprintf(stderr,
                 "\nerror: apply asks for approval before changing anything, and there is no "
                 "terminal to ask on (standard input is not a terminal). Nothing was applied.\n"
                 "Review the plan above, then rerun with --auto-approve to apply it.\n");
    return false;
  }
  if (!AskYes(stdin, stderr, ApprovalPrompt(plan))) {
    std::fprintf(stderr, "\nApply cancelled: nothing was applied.\n");
    return false;
  }
  std::fputc('\n', stderr);
  return true;
}

int RunApply(ApplyFlags& f) {
  SignalThread signals;  // before any other thread exists
  // Until the executor runs, an interrupt only stops this process: nothing
  // has been changed yet (the refresh reads; the question waits).
  signals.OnInterrupt([] {
    const char msg[] = "\nInterrupted: nothing was applied.\n";
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    _exit(1);
  });
  f.run.plan.only_targets = f.targets;
  f.run.include_operations = true;
  plan::Plan plan;
  PlanRun run;
  if (!f.plan_file.empty()) {
    if (!LoadSavedPlan(f, &run, &plan)) return 1;
  } else {
    auto r = LoadRefreshPlan(f.run);
    if (!r.ok()) {
      PrintFatalError(r.status());
      return 1;
    }
    run = std::move(r.value());
    plan = run.plan;
  }

  plan::TextOptions text;
  text.color = isatty(STDOUT_FILENO);
  text.summary_over = f.summary_over;
  text.full = f.full;
  std::fputs(plan::RenderText(plan, text).c_str(), stdout);
  std::fflush(stdout);

  bool plan_errors = plan.HasErrors();
  if (!plan.HasChanges()) return plan_errors ? 1 : 0;
  // Nothing that spends or destroys capacity is called before this answer.
  if (!f.auto_approve && !Approved(plan)) return 1;

  apply::ExecuteOptions eo;
  eo.parallelism = f.parallelism;
  eo.steps.poll.initial = std::chrono::milliseconds(f.poll_initial_ms);
  eo.steps.poll.max = std::chrono::milliseconds(std::max(f.poll_initial_ms, f.poll_max_ms));
  eo.steps.budget.deadline = std::chrono::seconds(f.retry_deadline_s);
  eo.steps.retry.base = std::chrono::milliseconds(f.retry_base_ms);
  eo.cluster_operations = f.cluster_operations;
  eo.steps.seed = static_cast<uint64_t>(getpid());
  for (const auto& [project, state] : run.live.projects)
    eo.running_operations.insert(eo.running_operations.end(), state.running_operations.begin(),
                                 state.running_operations.end());

  ProgressView view(stderr, STDERR_FILENO);
  cloud::CloudConnection& conn = run.session->connection();
  apply::Executor executor({&conn.gke(), &conn.compute(), &conn.poller(), &conn.watch()}, eo, view.Observer());
  // SIGINT/SIGTERM now cancel: running operations are left to the next run,
  // which finds them through the operations list.
  signals.OnInterrupt([&executor] {
    spdlog::warn("interrupted: not starting new actions; operations in flight are left to the next run");
    executor.Cancel();
  });
  apply::ApplyReport report = view.Run(executor, plan, signals);
  signals.OnInterrupt(nullptr);
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
  cmd->footer("Examples:\n"
              "  tpu-provisioner apply --repo example-project --cloud sim     # try it against the embedded emulator\n"
              "  tpu-provisioner apply --repo . --target my-proj/train        # one cluster; asks before changing anything\n"
              "  tpu-provisioner plan --repo . -out tpu.plan && tpu-provisioner apply tpu.plan --auto-approve   # CI");
  cmd->add_option("planfile", f->plan_file, "A plan saved with `plan -out FILE`");
  cmd->add_option("--repo", f->run.repo_path, "The GitOps repository (default: .)");
  cmd->add_option("--target", f->targets, "Only this project/cluster (repeatable)");
  cmd->add_flag("--auto-approve", f->auto_approve,
                "Apply without asking (needed when there is no terminal to ask on)");
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
  AddPlanTextFlags(cmd, &f->summary_over, &f->full);
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
