// The synthetic fleet: a GitOps repo laid out as deploy/<project>/<cluster>/
// with P projects × C clusters × N node pools of mixed TPU generations
// (single- and multi-host, several slices, on-demand, spot and reservations)
// and G TPUNodeGroups per cluster. Seeded: the same spec writes the same bytes.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace tpu::bench {

struct FleetSpec {
  int projects = 50;
  int clusters = 20;         // per project
  int pools = 20;            // GKE node pools per cluster (slices count one each)
  int groups = 1;            // TPUNodeGroups per cluster
  uint64_t seed = 1;
  std::string ProjectId(int p) const;   // "bench-p007"
  std::string ClusterName(int c) const; // "cluster-012"
};

struct FleetSummary {
  int targets = 0;
  int node_pools = 0;        // GKE node pools (after slices)
  int pool_manifests = 0;    // TPUNodePool documents
  int node_groups = 0;
  int files = 0;
  uint64_t bytes = 0;
};

// Writes `repo`/deploy/… (the directory must not hold a deploy/ yet).
Result<FleetSummary> WriteFleetRepo(const FleetSpec& spec, const std::string& repo);

// The file a one-file change edits, relative to the repo ("deploy/…/pools-0.yaml"),
// and that change: the label `bench-edit` of its first pool set to `value`.
std::string EditedFile(const FleetSpec& spec);
Status EditOneFile(const std::string& repo, const std::string& rel, const std::string& value);

}  // namespace tpu::bench
