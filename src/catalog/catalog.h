// The TPU catalog: generations, machine types, topologies and what a slice of a
// given shape needs (docs/architecture.md, "The TPU catalog"). Pure data and arithmetic: no files, no HTTP.
//
// ResolveShape() is the one question the rest of the program asks: given an
// accelerator (label or alias), a topology and optionally a machine type, what
// slice is that — chips, VMs, single- or multi-host, and the placement a GKE
// create body needs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tpu::catalog {

struct MachineType {
  std::string name;  // "ct5lp-hightpu-4t"
  int chips_per_vm = 0;
  bool operator==(const MachineType&) const = default;
};

// How a multi-host slice of a generation is placed.
enum class MultiHostPlacement {
  kCompactTopology,  // placementPolicy{type: COMPACT, tpuTopology}
  kWorkloadPolicy,   // placementPolicy{policyName}: a Compute workload policy (v7x)
};

struct Generation {
  std::string name;               // "v5e"
  std::string accelerator;        // GKE label value: "tpu-v5-lite-podslice"
  std::vector<std::string> aliases;
  std::vector<MachineType> machine_types;
  int dims = 0;                   // 2 or 3
  int max_chips = 0;
  MultiHostPlacement multi_host_placement = MultiHostPlacement::kCompactTopology;
  // 2-D generations list their topologies; 3-D ones follow the rule in
  // IsValidTopology() and list only the small named shapes here.
  std::vector<std::string> topologies;
  // The Compute accelerator type used by TPUNodeGroups and workload policies.
  std::string compute_accelerator_type;  // "tpu-v5p", ...
};

// Where a slice goes, as the GKE create body spells it.
enum class Placement {
  kNone,            // single-host
  kCompact,         // COMPACT + tpuTopology
  kWorkloadPolicy,  // policyName of a workload policy with acceleratorTopology
};

struct Shape {
  const Generation* generation = nullptr;
  std::string topology;      // normalised "AxB" or "AxBxC"
  std::vector<int> dims;
  MachineType machine_type;
  int chips = 0;             // per slice
  int vms = 0;               // nodes per slice
  bool multi_host = false;
  Placement placement = Placement::kNone;
  bool operator==(const Shape&) const = default;  // the same generation object
};

// All generations, in release order.
const std::vector<Generation>& Generations();

// The generation for an accelerator label ("tpu-v6e-slice") or an alias ("v6e").
// Returns nullptr when unknown.
const Generation* FindGeneration(std::string_view accelerator_or_alias);

// Parses "2x2x4" into {2,2,4}; empty on a malformed string.
std::vector<int> ParseTopology(std::string_view topology);

// Resolves a slice. `machine_type` may be empty: it is then derived, preferring
// the machine type that makes the slice single-host (v5e/v6e 2x4 → 8t, one VM).
// Errors say what was expected, e.g. "topology 4x4 is not valid for v4 (3-D:
// 2x2x1, 2x2x2, 2x2x4, 2x4x4, or AxBxC with each a multiple of 4, A≤B≤C, ≤ 4096 chips)".
Result<Shape> ResolveShape(std::string_view accelerator, std::string_view topology,
                           std::string_view machine_type = {});

// The rule for a generation's valid topologies, in words, for error messages.
std::string DescribeTopologies(const Generation& gen);

// The generation whose machine type this is ("ct5p-hightpu-4t" → v5p), or nullptr.
const Generation* GenerationOfMachineType(std::string_view machine_type);
// Chips per VM of a machine type, or 0 when unknown.
int ChipsPerVm(std::string_view machine_type);
// The one topology a single-host slice of this machine type has ("ct6e-standard-8t"
// → "2x4", "ct5p-hightpu-4t" → "2x2x1"), or "" when the machine type is unknown.
std::string SingleHostTopology(std::string_view machine_type);

}  // namespace tpu::catalog
