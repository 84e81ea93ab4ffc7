// What a route handler gets for one request: the state (already locked by the
// caller), the time, the random source, and the operation latencies. Handlers
// set `changed` when they modify the state so the emulator persists it.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "sim/cloud_state.h"

namespace tpu::sim {

struct SimContext {
  CloudState& state;
  int64_t now_ms = 0;                          // wall clock, ms since the epoch
  std::mt19937_64& rng;                        // operation names, ids
  const std::map<std::string, int>& op_latency_ms;  // by operation type; "default"
  bool fail_operation = false;                 // fault injection: the op this request starts fails
  int operations_quota = 5;                    // concurrent node-pool operations per cluster
  std::string release_channel = "REGULAR";     // of clusters made without one ("" = none)
  bool changed = false;
  // Clusters ("P/L/C") this request started a GKE operation on, for the
  // emulator's peak-concurrency counters.
  std::vector<std::string> started_on_clusters = {};
};

}  // namespace tpu::sim
