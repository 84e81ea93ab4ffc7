// Scenario 2: reading and validating the fleet's repo with the project's loader
// (DiskTree + LoadRepo, no cache: a cold load, parsing on every core) against
// the bare single-thread yaml-cpp parse of the same files (read + YAML::LoadAll,
// nothing else): the library's own limit on one core. Both in this process,
// alternated, median of the runs.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <yaml-cpp/yaml.h>

#include "bench/process.h"
#include "bench/scenarios.h"
#include "manifest/disk_tree.h"
#include "manifest/loader.h"

namespace tpu::bench {
namespace {

// Every .yaml/.yml under deploy/, read and parsed; returns the document count.
size_t BareParse(const std::string& repo) {
  size_t docs = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(repo + "/deploy")) {
    if (!e.is_regular_file()) continue;
    const auto ext = e.path().extension();
    if (ext != ".yaml" && ext != ".yml") continue;
    std::ifstream in(e.path());
    std::stringstream ss;
    ss << in.rdbuf();
    docs += YAML::LoadAll(ss.str()).size();
  }
  return docs;
}

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

void RunManifestLoad(const BenchContext& ctx, Results* out) {
  const std::string sc = "2 manifest load";
  std::vector<double> loader, bare;
  size_t pools = 0, groups = 0, errors = 0, docs = 0;
  const int runs = std::max(ctx.runs, 3);
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    auto tree = manifest::DiskTree::Open(ctx.repo);
    if (!tree.ok()) {
      out->Add(sc, "loader time", std::nullopt, "s", tree.status().ToString());
      return;
    }
    manifest::Repo repo = manifest::LoadRepo(**tree);
    auto t1 = Clock::now();
    docs = BareParse(ctx.repo);
    auto t2 = Clock::now();
    loader.push_back(Seconds(t0, t1));
    bare.push_back(Seconds(t1, t2));
    pools = groups = 0;
    for (const auto& t : repo.targets) {
      pools += t.pools.size();
      groups += t.groups.size();
    }
    errors = repo.AllErrors().size();
  }
  const std::string note = "median of " + std::to_string(runs) + " runs; loader on all " +
                           std::to_string(std::max(1u, std::thread::hardware_concurrency())) +
                           " cores, bare parse on one; " + std::to_string(pools) +
                           " TPUNodePools + " + std::to_string(groups) + " TPUNodeGroups, " +
                           std::to_string(errors) + " errors; bare parse saw " +
                           std::to_string(docs) + " documents";
  const auto l = Median(loader), b = Median(bare);
  out->Add(sc, "loader: read + validate", l, "s", note);
  out->Add(sc, "bare yaml-cpp parse of the same files", b, "s", note);
  auto& r = out->Add(sc, "loader / bare parse", l && b && *b > 0 ? std::optional<double>(*l / *b) : std::nullopt, "×");
  r.target = "≤ 0.7× (all cores)";
  if (r.value) r.met = *r.value <= 0.7;
}

}  // namespace tpu::bench
