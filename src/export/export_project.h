// `export`: the live TPU capacity of a project written back as manifests, so
// pools made by hand (or by another tool) come under git without retyping.
//
// Every TPU node pool of a GKE cluster becomes a TPUNodePool in
// deploy/<project>/<cluster>/, and the slices of a multislice set
// (`<name>-0` … `<name>-<N-1>`, one shape) one TPUNodePool with `slices: N`;
// every TPU managed instance group a TPUNodeGroup. Only what differs from
// the defaults the loader and GKE apply is written, so a manifest says what
// someone chose. Resources without tpu-provisioner's markers get
// `tpu-provisioner.io/adopt: "true"`. Demand-driven pools (owned by a
// workload) and pools whose names or shapes a manifest cannot say are left
// out, each with a note saying why.
//
// The contract is the round trip: loading the files and planning them against
// the same live state finds nothing to change. The CLI checks it after every
// export. Pure: no HTTP, no files.
#pragma once

#include <string>
#include <vector>

#include "cloud/types.h"

namespace tpu::exporter {

struct ExportedFile {
  std::string path;  // relative to the output root: "deploy/<project>/<cluster>/<name>.yaml"
  std::string text;
};

struct ExportResult {
  std::vector<ExportedFile> files;  // sorted by path
  std::vector<std::string> notes;   // what was left out, and why
  int node_pool_manifests = 0;      // TPUNodePools written
  int node_pools = 0;               // GKE node pools they cover
  int node_groups = 0;              // TPUNodeGroups written
};

struct ExportOptions {
  std::string cluster;  // only this cluster's directory; empty: every cluster
};

ExportResult ExportProject(const cloud::ProjectState& live, const ExportOptions& options = {});

}  // namespace tpu::exporter
