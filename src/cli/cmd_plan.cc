// `tpu-provisioner plan`: load the repo, refresh live state (list calls only),
// compute the plan and print it — Terraform-style text, the JSON document
// of docs/plan-json.md with `-o json`, or a pull request's Markdown with
// `-o markdown` (fitted to `--max-bytes`) — and optionally save it for
// `apply FILE` with `-out FILE`. Never calls a mutating API.
//
// Exit codes: 0 success (with --detailed-exitcode: success and no changes),
// 1 error (a fatal one before any plan, or a blocked or refused target, or a
// repo-level manifest error; the plan is still printed), 2 with
// --detailed-exitcode: success and changes to apply.
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/plan_run.h"
#include "plan/plan_json.h"
#include "plan/render_markdown.h"
#include "plan/render_text.h"

namespace tpu::cli {
namespace {

struct PlanFlags {
  PlanRunOptions run;
  std::vector<std::string> targets;
  std::vector<std::string> outputs;  // every -o/--output value, see the note on -out below
  std::string output = "text";
  std::string out_file;
  std::string stray;  // see the note on -out below
  bool detailed_exitcode = false;
  bool show_noop = false;
  bool no_color = false;
  int summary_over = plan::kDefaultSummaryOver;
  bool full = false;
  size_t max_bytes = plan::kDefaultMarkdownMaxBytes;
};

// Written to a temporary file and renamed, so a crash never leaves half a plan.
Status WriteFileAtomically(const std::string& path, const std::string& data) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::IoError(tmp + ": cannot write");
    out << data;
    out.flush();
    if (!out) return Status::IoError(tmp + ": write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::IoError(path + ": cannot rename the plan into place");
  }
  return Status::OK();
}

// Log lines go to stderr: stdout carries the plan, and `-o json` must be
// nothing but the document.
void LogToStderr() {
  auto level = spdlog::default_logger()->level();
  auto logger = spdlog::stderr_color_mt("plan");
  logger->set_level(level);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  spdlog::set_default_logger(logger);
}

// `plan` refreshes once and exits, so main's 128 KiB mmap threshold (set for
// the daemon's heaps, docs/architecture.md "Read live state") only costs it:
// every response body and parse buffer is mapped, faulted in page by page,
// and unmapped, and the freed heap top is trimmed and faulted in again. Kept
// in the heap instead, the next response reuses them: a cold plan of 20,000
// node pools takes 99,000 → 35,000 page faults and about 0.1 s less CPU, for
// a peak RSS 10 MB higher (144 → 154 MB).
void KeepBuffersForOneShotRun() {
  mallopt(M_MMAP_THRESHOLD, 16 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 64 * 1024 * 1024);
}

// The process exits once the plan is printed: its manifests, live state and
// plan (every node pool's strings and maps) are left to the exit to reclaim
// rather than freed one by one, about 5 % of a cold plan's CPU. The session
// is closed, so its threads end first. Reachable from a static, so leak
// checkers do not report it.
class LeaveToExit {
 public:
  explicit LeaveToExit(Result<PlanRun>* run) : run_(run) {}
  LeaveToExit(const LeaveToExit&) = delete;
  LeaveToExit& operator=(const LeaveToExit&) = delete;
  ~LeaveToExit() {
    if (!run_->ok()) return;
    (*run_)->session.reset();
    static auto* kept = new std::vector<PlanRun>();
    kept->push_back(std::move(run_->value()));
  }

 private:
  Result<PlanRun>* run_;
};

int RunPlan(PlanFlags& f) {
  KeepBuffersForOneShotRun();
  LogToStderr();
  // CLI11 2.1 has no single-dash long options, so Terraform's `-out FILE`
  // arrives as `-o ut` plus a stray positional FILE (and `-out=FILE` as
  // `-o ut=FILE`); both are read back here. `--out FILE` is the plain spelling.
  for (size_t i = 0; i < f.outputs.size(); ++i) {
    const std::string& v = f.outputs[i];
    if (v == "ut" && i + 1 < f.outputs.size()) {
      f.out_file = f.outputs[++i];  // CLI11 handed -o the next argument too
    } else if (v == "ut" && !f.stray.empty()) {
      f.out_file = f.stray;
      f.stray.clear();
    } else if (v.rfind("ut=", 0) == 0) {
      f.out_file = v.substr(3);
    } else {
      f.output = v;
    }
  }
  if (!f.stray.empty()) {
    std::fprintf(stderr, "error: unexpected argument \"%s\"\n", f.stray.c_str());
    return 1;
  }
  if (f.output != "text" && f.output != "json" && f.output != "markdown") {
    std::fprintf(stderr, "error: -o %s: expected text, json or markdown\n", f.output.c_str());
    return 1;
  }
  for (const auto& t : f.targets) {
    if (t.find('/') == std::string::npos || t.front() == '/' || t.back() == '/') {
      std::fprintf(stderr, "error: --target %s: expected project/cluster\n", t.c_str());
      return 1;
    }
  }
  f.run.plan.only_targets = f.targets;
  // Live fingerprints and noops' bodies serve a plan written as JSON (-out,
  // or -o json, which a pipeline may keep and apply): a plan that is only
  // shown skips re-serialising the fleet and holds no second copy of it.
  f.run.plan.fingerprint_live = !f.out_file.empty() || f.output == "json";
  f.run.plan.noop_bodies = f.run.plan.fingerprint_live;  // only JSON shows them
  auto run = LoadRefreshPlan(f.run);
  LeaveToExit leave(&run);
  if (!run.ok()) {
    PrintFatalError(run.status());
    return 1;
  }
  const plan::Plan& plan = run->plan;

  if (f.output == "json") {
    std::fputs(plan::PlanToJson(plan).c_str(), stdout);
  } else if (f.output == "markdown") {
    plan::MarkdownOptions md;
    md.max_bytes = f.max_bytes;
    if (!f.out_file.empty()) md.full_plan_hint = "the saved JSON plan lists every action";
    std::fputs(plan::RenderMarkdown(plan, md).c_str(), stdout);
  } else {
    plan::TextOptions text;
    text.color = !f.no_color && isatty(STDOUT_FILENO);
    text.show_noop = f.show_noop;
    text.summary_over = f.summary_over;
    text.full = f.full;
    std::fputs(plan::RenderText(plan, text).c_str(), stdout);
  }
  std::fflush(stdout);

  if (!f.out_file.empty()) {
    Status s = WriteFileAtomically(f.out_file, plan::PlanToJson(plan));
    if (!s.ok()) {
      std::fprintf(stderr, "error: %s\n", s.message().c_str());
      return 1;
    }
    // Markdown goes where a size limit holds (a job summary): the note goes to stderr.
    if (f.output != "json")
      std::fprintf(f.output == "text" ? stdout : stderr,
                   "\nSaved the plan to %s; apply exactly it with: tpu-provisioner apply %s\n",
                   f.out_file.c_str(), f.out_file.c_str());
  }

  if (plan.HasErrors()) return 1;
  // Adoptions write only ownership labels: the plan reports no changes.
  if (f.detailed_exitcode && plan.HasChanges() && !plan.OnlyAdoptions()) return 2;
  return 0;
}

}  // namespace

void AddPlanCommand(CLI::App& app, CommandContext& ctx) {
  auto* cmd = app.add_subcommand(
      "plan", "Show what apply would change: manifests against live state (read-only)");
  cmd->footer("Examples:\n"
              "  tpu-provisioner plan --repo example-project --cloud sim       # against the embedded emulator\n"
              "  tpu-provisioner plan --repo . -out tpu.plan                  # then: tpu-provisioner apply tpu.plan\n"
              "  tpu-provisioner plan --repo . -o markdown --out tpu.plan >> \"$GITHUB_STEP_SUMMARY\"");
  auto f = std::make_shared<PlanFlags>();
  cmd->add_option("--repo", f->run.repo_path, "The GitOps repository (a directory with deploy/)");
  cmd->add_option("--target", f->targets, "Plan only this project/cluster (repeatable)");
  cmd->add_option("-o,--output", f->outputs, "text (default), json (docs/plan-json.md) or markdown (for a pull request)")
      ->expected(1)
      ->allow_extra_args(false)
      ->take_all();
  cmd->add_option("--out", f->out_file,
                  "Also save the plan as JSON to FILE, for `apply FILE` (Terraform's -out FILE works too)");
  cmd->add_option("stray", f->stray)->group("");  // the FILE of `-out FILE`, see RunPlan
  cmd->add_flag("--detailed-exitcode", f->detailed_exitcode,
                "Exit 0 when there are no changes, 2 when there are, 1 on errors");
  cmd->add_flag("--allow-mass-delete", f->run.plan.allow_mass_delete,
                "Allow deleting more than a target's maxDeletePercent of its owned chips");
  cmd->add_flag("--show-noop", f->show_noop, "Also list resources that are in sync");
  cmd->add_flag("--no-color", f->no_color, "No colours, even on a terminal");
  AddPlanTextFlags(cmd, &f->summary_over, &f->full);
  cmd->add_option("--max-bytes", f->max_bytes,
                  "-o markdown: the most bytes to print; the largest targets' details are shortened to fit "
                  "(default " + std::to_string(plan::kDefaultMarkdownMaxBytes) + ")")
      ->check(CLI::Range(size_t{200}, size_t{1} << 30));
  AddCloudFlags(cmd, &f->run.cloud);
  cmd->callback([f, &ctx] { ctx.exit_code = RunPlan(*f); });
}

}  // namespace tpu::cli
