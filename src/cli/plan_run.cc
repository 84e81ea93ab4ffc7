// load → refresh → plan (see plan_run.h).
#include "cli/plan_run.h"

#include <ctime>

#include "base/version.h"
#include "manifest/disk_tree.h"
#include "manifest/loader.h"
#include "plan/render_text.h"
#include "plan/reservations.h"

namespace tpu::cli {

std::string NowRfc3339() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void AddPlanTextFlags(CLI::App* cmd, int* summary_over, bool* full) {
  cmd->add_option("--summary-over", *summary_over,
                  "Group identical actions per target when the plan has more than N actions "
                  "(default " + std::to_string(plan::kDefaultSummaryOver) + ")")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--full", *full, "List every action, however many (JSON always does)");
}

Result<manifest::Repo> LoadRepoFromDisk(const std::string& path) {
  auto tree = manifest::DiskTree::Open(path);
  if (!tree.ok()) return tree.status().WithContext("--repo " + path);
  return manifest::LoadRepo(**tree);
}

Result<PlanRun> LoadRefreshPlan(const PlanRunOptions& options) {
  PlanRun run;
  auto repo = LoadRepoFromDisk(options.repo_path);
  if (!repo.ok()) return repo.status();
  run.repo = std::move(repo.value());
  auto session = CloudSession::Open(options.cloud, run.repo);
  if (!session.ok()) return session.status();
  run.session = std::move(session.value());
  cloud::RefreshOptions refresh;
  refresh.include_operations = options.include_operations;
  // Reservations cost a call per project: read only when a manifest names one.
  plan::NamedReservations named = plan::ReservationsNamedBy(run.repo, options.plan);
  refresh.include_reservations = named.any;
  refresh.named_reservations = std::move(named.foreign);
  auto live = run.session->connection().Refresh(plan::ProjectsToRefresh(run.repo, options.plan),
                                                refresh);
  if (!live.ok()) return live.status();
  run.live = std::move(live.value());
  plan::PlanOptions po = options.plan;
  po.tool_version = TPU_PROVISIONER_VERSION;
  if (po.created_at.empty()) po.created_at = NowRfc3339();
  run.plan = plan::ComputePlan(run.repo, run.live, po);
  return run;
}

}  // namespace tpu::cli
