// `tpu-provisioner export`: writes a project's live TPU node pools and TPU
// managed instance groups as manifests under OUT/deploy/<project>/<cluster>/
// (export/export_project.h), then proves the round trip: it loads what it
// wrote and plans it against the same live state, which must find nothing to
// change. Reads only (list calls); exit 1 when the round trip is not exact.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "cli/commands.h"
#include "cli/cloud_setup.h"
#include "cli/plan_run.h"
#include "export/export_project.h"
#include "plan/planner.h"
#include "plan/render_text.h"

namespace tpu::cli {
namespace {

namespace fs = std::filesystem;

struct ExportFlags {
  std::string project;
  std::string cluster;
  std::string out;
  CloudFlags cloud;
};

int RunExport(const ExportFlags& f) {
  manifest::Repo none;
  auto session = CloudSession::Open(f.cloud, none);
  if (!session.ok()) {
    PrintFatalError(session.status());
    return 1;
  }
  auto live = (*session)->connection().Refresh({f.project}, {});
  if (!live.ok()) {
    PrintFatalError(live.status());
    return 1;
  }
  const cloud::ProjectState& ps = live->projects[f.project];
  if (!f.cluster.empty() && std::none_of(ps.clusters.begin(), ps.clusters.end(),
                                         [&](const cloud::Cluster& c) { return c.name == f.cluster; }) &&
      ps.instance_group_managers.empty()) {
    std::fprintf(stderr, "error: --cluster %s: no such cluster in project %s\n", f.cluster.c_str(), f.project.c_str());
    return 1;
  }
  exporter::ExportResult r = exporter::ExportProject(ps, {f.cluster});
  std::set<std::string> targets;
  for (const auto& file : r.files) {
    fs::path p = fs::path(f.out) / file.path;
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    std::ofstream o(p, std::ios::binary | std::ios::trunc);
    o << file.text;
    if (!o.flush()) {
      std::fprintf(stderr, "error: %s: cannot write\n", p.c_str());
      return 1;
    }
    std::printf("wrote %s\n", file.path.c_str());
    fs::path dir = fs::path(file.path).parent_path();  // deploy/<project>/<cluster>
    targets.insert(dir.parent_path().filename().string() + "/" + dir.filename().string());
  }
  for (const auto& n : r.notes) std::printf("note: %s\n", n.c_str());
  std::printf("Exported %d TPUNodePools (%d node pools) and %d TPUNodeGroups from %s.\n", r.node_pool_manifests,
              r.node_pools, r.node_groups, f.project.c_str());
  if (targets.empty()) return 0;

  // The round trip: the files as the loader reads them, planned against the
  // very live state they came from.
  auto repo = LoadRepoFromDisk(f.out);
  if (!repo.ok()) {
    PrintFatalError(repo.status());
    return 1;
  }
  plan::PlanOptions po;
  po.only_targets.assign(targets.begin(), targets.end());
  po.fingerprint_live = false;
  plan::Plan plan = plan::ComputePlan(*repo, *live, po);
  // Adopting an unmanaged pool writes tpu-provisioner's ownership labels:
  // that update is the adoption (Action::adopt_only), not a difference.
  int adoptions = plan.Summarize().adopt;
  const bool exact = !plan.HasErrors() && (!plan.HasChanges() || plan.OnlyAdoptions());
  if (!exact) {
    std::printf("\nThe round trip is not exact: planning the exported files finds this:\n\n%s",
                plan::RenderText(plan).c_str());
    return 1;
  }
  if (adoptions)
    std::printf("Round trip: planning the exported files against live state finds no changes; the first apply "
                "adopts %d unmanaged node pools (it writes only tpu-provisioner's ownership labels).\n",
                adoptions);
  else
    std::printf("Round trip: planning the exported files against live state finds no changes.\n");
  return 0;
}

}  // namespace

void AddExportCommand(CLI::App& app, CommandContext& ctx) {
  auto* cmd = app.add_subcommand("export", "Write a project's live TPU node pools and MIGs as manifests (read-only)");
  cmd->footer("Examples:\n"
              "  tpu-provisioner export --project ml-prod --out .                 # every cluster, into ./deploy/ml-prod/\n"
              "  tpu-provisioner export --project ml-prod --cluster train --out /tmp/x --cloud sim:state.json");
  auto f = std::make_shared<ExportFlags>();
  cmd->add_option("--project", f->project, "The Google Cloud project")->required();
  cmd->add_option("--cluster", f->cluster, "Only this GKE cluster (and TPUNodeGroups marked for it)");
  cmd->add_option("--out", f->out, "The repository root to write deploy/<project>/<cluster>/*.yaml under")->required();
  AddCloudFlags(cmd, &f->cloud);
  cmd->callback([f, &ctx] { ctx.exit_code = RunExport(*f); });
}

}  // namespace tpu::cli
