// The emulator state that matches a fleet repo: everything its manifests
// declare, already created, owned and RUNNING, so a plan of the repo against it
// is in sync. Built in-process, honestly and fast: an embedded emulator with
// zero latency gets the repo's clusters, the project's own planner computes the
// create actions against it, node pools are seeded in batches through
// POST /sim/seed (the emulator's real create route, operations ended at once),
// Compute objects are inserted through the project's Compute client; then the
// plan is recomputed and must show no change, and the state is written in the
// emulator's state-file format.
#pragma once

#include <string>

#include "base/status.h"

namespace tpu::bench {

struct FleetStateSummary {
  int clusters = 0;
  int node_pools = 0;
  int compute_objects = 0;  // workload policies, instance templates, MIGs
  int changes_left = 0;     // non-noop actions of the re-plan (0 = in sync)
};

Result<FleetStateSummary> WriteFleetState(const std::string& repo, const std::string& state_file);

}  // namespace tpu::bench
