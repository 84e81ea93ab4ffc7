// Scenario 1: a cold `plan` of the whole fleet, in sync, against the per-resource
// GET refresh (baseline_refresh.h), both as separate processes against the
// same emulator process, at each request latency. Figures: wall, CPU, peak
// RSS, API calls; ratios of calls and wall time.
#include <filesystem>
#include <fstream>

#include "bench/process.h"
#include "bench/scenarios.h"
#include "bench/sim_process.h"

namespace tpu::bench {
namespace {

struct Runs {
  std::vector<double> wall, cpu, rss_mb, calls;
  int failures = 0;
  std::string last_error;
};

void Measure(SimProcess& sim, const ProcessSpec& spec, int expect_exit, Runs* r) {
  if (Status s = sim.ResetCounters(); !s.ok()) {
    ++r->failures;
    r->last_error = s.ToString();
    return;
  }
  auto u = RunProcess(spec);
  auto calls = sim.Calls();
  if (!u.ok() || !calls.ok() || u->exit_code != expect_exit) {
    ++r->failures;
    r->last_error = !u.ok() ? u.status().ToString()
                            : "exit code " + std::to_string(u->exit_code) + " (expected " +
                                  std::to_string(expect_exit) + ")";
    return;
  }
  r->wall.push_back(u->wall_s);
  r->cpu.push_back(u->cpu_s);
  r->rss_mb.push_back(u->max_rss_kb / 1024.0);
  r->calls.push_back(static_cast<double>(*calls));
}

// The fewest list calls a refresh of the fleet can make: per project, its
// GKE clusters and the aggregated lists of workload policies, templates and
// MIGs, and of reservations when its manifests name one (docs/capacity.md).
// A project names one when a file under deploy/<project>/ has a
// `reservation:` key (the generator writes it for nothing else). Read line
// by line, not loaded: this process's peak RSS would become its children's
// (GenerateFleet in main.cc says why).
int ListCallsLowerBound(const std::string& repo_path, int* naming) {
  namespace fs = std::filesystem;
  int projects = 0;
  *naming = 0;
  std::error_code ec;
  for (const auto& project : fs::directory_iterator(fs::path(repo_path) / "deploy", ec)) {
    if (!project.is_directory()) continue;
    ++projects;
    bool names = false;
    for (auto it = fs::recursive_directory_iterator(project.path(), ec); !names && it != fs::end(it);
         it.increment(ec)) {
      if (!it->is_regular_file()) continue;
      std::ifstream in(it->path());
      for (std::string line; !names && std::getline(in, line);)
        names = line.find("reservation:") != std::string::npos;
    }
    if (names) ++*naming;
  }
  return 4 * projects + *naming;
}

std::string RunsNote(const Runs& r) {
  std::string n = "median of " + std::to_string(r.wall.size()) + " runs";
  if (r.failures) n += "; " + std::to_string(r.failures) + " failed: " + r.last_error;
  return n;
}

}  // namespace

void RunColdPlan(const BenchContext& ctx, Results* out) {
  const std::string sc = "1 cold plan";
  const int projects = ctx.fleet.projects;
  int naming = 0;
  const int bound = ListCallsLowerBound(ctx.repo, &naming);
  bool first_latency = true;
  for (int latency : ctx.latencies) {
    const std::string tag = " (" + std::to_string(latency) + " ms)";
    // A copy: the emulator owns its state file while it runs.
    const std::string state = ctx.work + "/cold-" + std::to_string(latency) + ".json";
    std::filesystem::copy_file(ctx.state, state, std::filesystem::copy_options::overwrite_existing);
    auto sim = SimProcess::Start({ctx.binary, state, ctx.work + "/sim-cold.json", latency, 200, json::array()});
    if (!sim.ok()) {
      out->Add(sc, "plan wall time" + tag, std::nullopt, "s", sim.status().ToString());
      continue;
    }
    ProcessSpec plan;
    plan.argv = {ctx.binary, "plan", "--repo", ctx.repo, "--gke-endpoint", (*sim)->endpoint(),
                 "--compute-endpoint", (*sim)->endpoint(), "--detailed-exitcode", "--no-color"};
    plan.env = ctx.env;
    plan.stdout_file = ctx.work + "/plan-" + std::to_string(latency) + ".txt";
    ProcessSpec base;
    base.argv = {ctx.self, "baseline", "--repo", ctx.repo, "--state", ctx.state, "--endpoint",
                 (*sim)->endpoint(), "--parallelism", std::to_string(ctx.baseline_parallelism)};
    base.env = ctx.env;
    Runs p, b;
    // Alternate, so machine load drifting during the run hits both alike.
    const int base_runs = ctx.quick_baseline && !first_latency ? 1 : ctx.baseline_runs;
    for (int i = 0; i < std::max(ctx.runs, base_runs); ++i) {
      if (i < ctx.runs) Measure(**sim, plan, /*in sync: no changes*/ 0, &p);
      if (i < base_runs) Measure(**sim, base, 0, &b);
    }
    first_latency = false;
    const auto pw = Median(p.wall), bw = Median(b.wall), pc = Median(p.calls), bc = Median(b.calls);
    out->Add(sc, "plan wall time" + tag, pw, "s", RunsNote(p));
    out->Add(sc, "plan CPU time" + tag, Median(p.cpu), "s", RunsNote(p));
    auto& rss = out->Add(sc, "plan peak RSS" + tag, Median(p.rss_mb), "MB", RunsNote(p));
    rss.target = "< 150 MB";
    if (rss.value) rss.met = *rss.value < 150;
    auto& calls = out->Add(sc, "plan API calls" + tag, pc, "calls",
                           "lower bound 4 × " + std::to_string(projects) + " projects + " +
                               std::to_string(naming) + " reservation lists = " + std::to_string(bound));
    calls.target = "≤ " + std::to_string(bound);
    if (pc) calls.met = *pc <= bound;
    out->Add(sc, "baseline wall time" + tag, bw, "s", RunsNote(b));
    out->Add(sc, "baseline CPU time" + tag, Median(b.cpu), "s", RunsNote(b));
    out->Add(sc, "baseline peak RSS" + tag, Median(b.rss_mb), "MB", RunsNote(b));
    out->Add(sc, "baseline API calls" + tag, bc, "calls", RunsNote(b));
    auto& rc = out->Add(sc, "calls: baseline / plan" + tag,
                        pc && bc && *pc > 0 ? std::optional<double>(*bc / *pc) : std::nullopt, "×");
    rc.target = "≥ 100×";
    if (rc.value) rc.met = *rc.value >= 100;
    auto& rw = out->Add(sc, "wall: baseline / plan" + tag,
                        pw && bw && *pw > 0 ? std::optional<double>(*bw / *pw) : std::nullopt, "×");
    rw.target = "≥ 10×";
    if (rw.value) rw.met = *rw.value >= 10;
  }
}

}  // namespace tpu::bench
