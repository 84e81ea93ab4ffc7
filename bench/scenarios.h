// The five scenarios of issue 9, each filling Results. They share one context:
// the binary under test, the fleet already generated (repo + matching emulator
// state, the repo committed to git), and how many runs of each.
#pragma once

#include <string>
#include <vector>

#include "bench/fleet.h"
#include "bench/results.h"

namespace tpu::bench {

struct BenchContext {
  std::string binary;            // build/bin/tpu-provisioner
  std::string self;              // this tpu-bench (for the baseline child)
  std::string work;              // scratch directory
  FleetSpec fleet;
  std::string repo;              // the fleet's repo (a git checkout)
  std::string state;             // the matching emulator state file
  std::vector<std::string> env;  // for every child: GCE_METADATA_HOST=…
  std::vector<int> latencies = {50, 0};  // emulator request latency, ms
  int runs = 3;
  int baseline_runs = 3;
  int baseline_parallelism = 10;  // Terraform's default -parallelism
  FleetSpec apply_fleet;          // scenario 4: groups = 0
  // Scenario 4's operation times: the first carries the targets, the rest are
  // shown beside it (see scenario_apply.cc).
  std::vector<int> apply_op_latencies_ms = {2000, 200};
  int idle_seconds = 60;
  bool quick_baseline = false;    // baseline at the first latency only once
};

void RunColdPlan(const BenchContext& ctx, Results* out);     // 1
void RunManifestLoad(const BenchContext& ctx, Results* out); // 2
void RunIncremental(const BenchContext& ctx, Results* out);  // 3 and 5 (same daemon)
void RunApplyMakespan(const BenchContext& ctx, Results* out);// 4

}  // namespace tpu::bench
