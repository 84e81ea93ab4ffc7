// tpu-bench: the fleet generator and the benchmark scenarios of issue 9.
//
//   tpu-bench fleet --out DIR [--projects P --clusters C --pools N --groups G --seed S]
//       writes DIR/repo (deploy/<project>/<cluster>/…) and DIR/cloud-state.json
//   tpu-bench run --size small|large [--projects …] --binary build/bin/tpu-provisioner
//                 --work DIR --out bench/RESULTS.md [--check]
//       generates the fleet, runs scenarios 1–5 against the real binary, writes the report
//   tpu-bench baseline --repo R --state F --endpoint URL [--parallelism 10]
//       scenario 1's per-resource GET refresh (run as a child process by `run`)
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <CLI/CLI.hpp>

#include "bench/baseline_refresh.h"
#include "bench/fleet.h"
#include "bench/fleet_state.h"
#include "bench/process.h"
#include "bench/report.h"
#include "bench/scenarios.h"
#include "metadata_server.h"

namespace tpu::bench {
namespace {

namespace fs = std::filesystem;

struct FleetFlags {
  std::string out;
  FleetSpec spec;
};

void AddSpecFlags(CLI::App* cmd, FleetSpec* s) {
  cmd->add_option("--projects", s->projects, "Projects");
  cmd->add_option("--clusters", s->clusters, "Clusters per project");
  cmd->add_option("--pools", s->pools, "GKE node pools per cluster");
  cmd->add_option("--groups", s->groups, "TPUNodeGroups per cluster");
  cmd->add_option("--seed", s->seed, "Generator seed");
}

std::string Describe(const FleetSpec& s, const FleetSummary& f, const FleetStateSummary& st, double secs) {
  return std::to_string(s.projects) + " projects × " + std::to_string(s.clusters) + " clusters × " +
         std::to_string(s.pools) + " node pools = " + std::to_string(f.node_pools) + " node pools (" +
         std::to_string(f.pool_manifests) + " TPUNodePool manifests) + " + std::to_string(f.node_groups) +
         " TPUNodeGroups in " + std::to_string(f.files) + " files (" + std::to_string(f.bytes / 1024) +
         " KiB), seed " + std::to_string(s.seed) + "; emulator state: " + std::to_string(st.node_pools) +
         " node pools, " + std::to_string(st.compute_objects) + " Compute objects, " +
         std::to_string(st.changes_left) + " changes left after seeding; generated in " +
         std::to_string(static_cast<int>(secs)) + " s";
}

Result<std::string> Generate(const FleetSpec& spec, const std::string& dir) {
  const auto t0 = Clock::now();
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto repo = WriteFleetRepo(spec, dir + "/repo");
  if (!repo.ok()) return repo.status();
  auto state = WriteFleetState(dir + "/repo", dir + "/cloud-state.json");
  if (!state.ok()) return state.status();
  if (state->changes_left != 0)
    return Status::Internal("the seeded emulator state is not in sync: " +
                            std::to_string(state->changes_left) + " changes left");
  return Describe(spec, *repo, *state, std::chrono::duration<double>(Clock::now() - t0).count());
}

Status GitInit(const std::string& repo) {
  const std::string cmd = "cd '" + repo + "' && git init -q -b main && git add -A && "
                          "git -c user.name=tpu-bench -c user.email=bench@localhost commit -q -m fleet";
  return std::system(cmd.c_str()) == 0 ? Status::OK() : Status::Internal("git init of " + repo + " failed");
}

struct RunFlags {
  std::string size = "small";
  FleetSpec spec;
  bool spec_given = false;
  std::string binary, work, out, profile_notes, before, before_label;
  bool check = false;
  int runs = 0, idle_seconds = 0;
  std::vector<int> scenarios;  // empty: all
};

// The fleets and run counts of --size, and the flags that override them.
void SizeContext(const RunFlags& f, const std::string& self, BenchContext* ctx) {
  ctx->self = self;
  ctx->binary = fs::absolute(f.binary).string();
  ctx->work = fs::absolute(f.work).string();
  if (f.size == "large") {
    ctx->fleet = FleetSpec{};  // 50 × 20 × 20 + 1,000 groups
    ctx->apply_fleet = FleetSpec{10, 20, 10, 0, 7};  // 2,000 creates over 200 clusters
    ctx->runs = 3;
    ctx->baseline_runs = 2;
    ctx->idle_seconds = 60;
  } else {
    ctx->fleet = FleetSpec{2, 3, 4, 1, 1};
    ctx->apply_fleet = FleetSpec{2, 5, 4, 0, 7};  // 40 creates over 10 clusters
    ctx->runs = 2;
    ctx->baseline_runs = 2;
    ctx->idle_seconds = 5;
  }
  if (f.spec_given) ctx->fleet = f.spec;
  if (f.runs > 0) ctx->runs = ctx->baseline_runs = f.runs;
  if (f.idle_seconds > 0) ctx->idle_seconds = f.idle_seconds;
}

// The fleet generated in a child process: Linux keeps a process's peak RSS
// across fork and exec (ru_maxrss), so every process this one starts would
// report at least the generator's gigabyte as its own peak. "" and false on failure.
bool GenerateFleet(const std::string& self, const BenchContext& ctx, std::string* description) {
  ProcessSpec gen;
  gen.argv = {self, "fleet", "--out", ctx.work + "/fleet", "--projects", std::to_string(ctx.fleet.projects),
              "--clusters", std::to_string(ctx.fleet.clusters), "--pools", std::to_string(ctx.fleet.pools),
              "--groups", std::to_string(ctx.fleet.groups), "--seed", std::to_string(ctx.fleet.seed)};
  fs::create_directories(ctx.work);
  gen.stdout_file = ctx.work + "/fleet.txt";
  auto generated = RunProcess(gen);
  std::ifstream described(gen.stdout_file);
  std::getline(described, *description);
  if (!generated.ok() || generated->exit_code != 0 || description->empty()) {
    std::fprintf(stderr, "error: tpu-bench fleet failed (exit %d)\n", generated.ok() ? generated->exit_code : -1);
    return false;
  }
  return true;
}

int Run(const RunFlags& f, const std::string& self, const std::string& command) {
  BenchContext ctx;
  SizeContext(f, self, &ctx);

  test_support::MetadataServer metadata("bench-token");
  ctx.env = {"GCE_METADATA_HOST=" + metadata.host(), "GOOGLE_APPLICATION_CREDENTIALS=",
             "CLOUDSDK_CONFIG=" + ctx.work + "/no-gcloud"};
  ReportHeader h;
  h.command = command;
  h.size = f.size;
  h.started_utc = UtcNow();
  h.load_before = LoadAvg();
  std::fprintf(stderr, "tpu-bench: generating the fleet in %s\n", ctx.work.c_str());
  if (!GenerateFleet(self, ctx, &h.fleet)) return 1;
  ctx.repo = ctx.work + "/fleet/repo";
  ctx.state = ctx.work + "/fleet/cloud-state.json";
  if (Status s = GitInit(ctx.repo); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
    return 1;
  }
  Results results;
  results.notes.push_back("Emulator request latency " + std::to_string(ctx.latencies[0]) + " ms and " +
                          std::to_string(ctx.latencies[1]) + " ms; the emulator runs as its own process "
                          "(`tpu-provisioner sim`); the baseline refreshes with " +
                          std::to_string(ctx.baseline_parallelism) +
                          " requests in flight (Terraform's default `-parallelism`), plan with its own "
                          "refresh parallelism.");
  auto wanted = [&](int n) {
    return f.scenarios.empty() || std::find(f.scenarios.begin(), f.scenarios.end(), n) != f.scenarios.end();
  };
  std::fprintf(stderr, "tpu-bench: %s\n", h.fleet.c_str());
  // Scenario 3 compares with scenario 1's cold plan: run alone, it has no ratio.
  if (wanted(1)) {
    std::fprintf(stderr, "tpu-bench: scenario 1\n");
    RunColdPlan(ctx, &results);
  }
  if (wanted(2)) {
    std::fprintf(stderr, "tpu-bench: scenario 2\n");
    RunManifestLoad(ctx, &results);
  }
  if (wanted(3) || wanted(5)) {
    std::fprintf(stderr, "tpu-bench: scenarios 3 and 5\n");
    RunIncremental(ctx, &results);
  }
  if (wanted(4)) {
    std::fprintf(stderr, "tpu-bench: scenario 4\n");
    RunApplyMakespan(ctx, &results);
  }
  h.finished_utc = UtcNow();
  h.load_after = LoadAvg();
  h.profile_notes_file = f.profile_notes;
  h.before_file = f.before;
  h.before_label = f.before_label;
  const std::string report = RenderReport(h, results);
  std::ofstream(f.out) << report;
  std::fputs(report.c_str(), stdout);
  int missing = 0;
  for (const auto& fig : results.figures)
    if (!fig.value) {
      ++missing;
      std::fprintf(stderr, "not measured: %s: %s (%s)\n", fig.scenario.c_str(), fig.name.c_str(), fig.note.c_str());
    }
  return f.check && missing > 0 ? 1 : 0;
}

}  // namespace
}  // namespace tpu::bench

int main(int argc, char** argv) {
  using namespace tpu::bench;
  CLI::App app{"tpu-bench: fleet generator and benchmarks (bench/)"};
  app.require_subcommand(1);
  int rc = 0;

  FleetFlags ff;
  auto* fleet = app.add_subcommand("fleet", "Write a synthetic fleet repo and its matching emulator state");
  fleet->add_option("--out", ff.out, "Directory (replaced): repo/ and cloud-state.json")->required();
  AddSpecFlags(fleet, &ff.spec);
  fleet->callback([&] {
    auto d = Generate(ff.spec, ff.out);
    if (!d.ok()) {
      std::fprintf(stderr, "error: %s\n", d.status().ToString().c_str());
      rc = 1;
      return;
    }
    std::printf("%s\n", d->c_str());
  });

  std::string brepo, bstate, bendpoint;
  int bpar = 10;
  auto* base = app.add_subcommand("baseline", "Per-resource GET refresh (scenario 1's baseline)");
  base->add_option("--repo", brepo)->required();
  base->add_option("--state", bstate, "Emulator state file listing the resources")->required();
  base->add_option("--endpoint", bendpoint)->required();
  base->add_option("--parallelism", bpar);
  base->callback([&] {
    auto r = RunBaselineRefresh(brepo, bstate, bendpoint, bpar);
    if (!r.ok() || r->found != r->resources) {
      std::fprintf(stderr, "error: %s\n",
                   r.ok() ? (std::to_string(r->found) + "/" + std::to_string(r->resources) + " found").c_str()
                          : r.status().ToString().c_str());
      rc = 1;
      return;
    }
    std::printf("%d resources\n", r->resources);
  });

  RunFlags rf;
  auto* run = app.add_subcommand("run", "Run scenarios 1-5 and write the report");
  run->add_option("--size", rf.size, "small (CI smoke, < 2 min) or large (50 × 20 × 20)")
      ->check(CLI::IsMember({"small", "large"}));
  auto* p = run->add_option("--projects", rf.spec.projects, "Override the fleet: projects");
  auto* c = run->add_option("--clusters", rf.spec.clusters, "…clusters per project");
  auto* n = run->add_option("--pools", rf.spec.pools, "…node pools per cluster");
  run->add_option("--binary", rf.binary, "tpu-provisioner to measure")->required();
  run->add_option("--work", rf.work, "Scratch directory")->required();
  run->add_option("--out", rf.out, "Report (markdown)")->required();
  run->add_option("--profile-notes", rf.profile_notes, "Markdown appended to the report (bench/PROFILE.md)");
  run->add_option("--before", rf.before, "An earlier report: its figures become a before → after table");
  run->add_option("--before-label", rf.before_label, "What the earlier report was (commit, date)");
  run->add_option("--runs", rf.runs, "Runs per figure (default: 2 small, 3 large)");
  run->add_option("--idle-seconds", rf.idle_seconds, "Scenario 5 window (default: 5 small, 60 large)");
  run->add_flag("--check", rf.check, "Exit 1 unless every figure was measured");
  run->add_option("--scenarios", rf.scenarios, "Only these scenarios (e.g. --scenarios 3 4; 3 and 5 share a "
                                               "daemon and run together; default: all)")
      ->check(CLI::Range(1, 5));
  run->callback([&] {
    rf.spec_given = p->count() + c->count() + n->count() > 0;
    std::string cmd;
    for (int i = 0; i < argc; ++i) cmd += (i ? " " : "") + std::string(argv[i]);
    rc = Run(rf, fs::read_symlink("/proc/self/exe").string(), cmd);
  });

  CLI11_PARSE(app, argc, argv);
  return rc;
}
