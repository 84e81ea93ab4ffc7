// TPU machine types and topology rules (see tpu_shapes.h), from the public GKE
// TPU documentation.
#include "sim/tpu_shapes.h"

#include <algorithm>
#include <sstream>
#include <vector>

namespace tpu::sim {
namespace {

struct MachineRow {
  const char* machine_type;
  const char* accelerator;
  int chips_per_vm;
  int dims;
  int max_chips;
};

constexpr MachineRow kMachines[] = {
    {"ct4p-hightpu-4t", "tpu-v4-podslice", 4, 3, 4096},
    {"ct5lp-hightpu-1t", "tpu-v5-lite-podslice", 1, 2, 256},
    {"ct5lp-hightpu-4t", "tpu-v5-lite-podslice", 4, 2, 256},
    {"ct5lp-hightpu-8t", "tpu-v5-lite-podslice", 8, 2, 256},
    {"ct5p-hightpu-4t", "tpu-v5p-slice", 4, 3, 6144},
    {"ct6e-standard-1t", "tpu-v6e-slice", 1, 2, 256},
    {"ct6e-standard-4t", "tpu-v6e-slice", 4, 2, 256},
    {"ct6e-standard-8t", "tpu-v6e-slice", 8, 2, 256},
    {"tpu7x-standard-1t", "tpu7x", 1, 3, 9216},
    {"tpu7x-standard-4t", "tpu7x", 4, 3, 9216},
};

// 2-D slices of v5e/v6e.
constexpr const char* k2dTopologies[] = {"1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"};

std::optional<std::vector<int>> ParseTopology(const std::string& s) {
  std::vector<int> dims;
  std::istringstream in(s);
  std::string part;
  while (std::getline(in, part, 'x')) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) return {};
    dims.push_back(std::stoi(part));
    if (dims.back() <= 0) return {};
  }
  if (dims.empty()) return {};
  return dims;
}

bool Valid3d(const std::vector<int>& d, int chips_per_vm) {
  // Small slices are listed; larger ones are multiples of 4 in ascending order.
  if (chips_per_vm == 1) return d == std::vector<int>{1, 1, 1};
  static const std::vector<std::vector<int>> kSmall = {{2, 2, 1}, {2, 2, 2}, {2, 2, 4}, {2, 4, 4}};
  for (const auto& s : kSmall)
    if (s == d) return true;
  for (int x : d)
    if (x % 4 != 0) return false;
  return std::is_sorted(d.begin(), d.end());
}

TpuSliceOrError Fail(const std::string& topology, const std::string& machine_type) {
  return {std::nullopt, "Invalid TPU topology \"" + topology + "\" for machine type \"" +
                            machine_type + "\"."};
}

}  // namespace

std::optional<TpuMachine> FindTpuMachine(const std::string& machine_type) {
  for (const auto& m : kMachines)
    if (machine_type == m.machine_type)
      return TpuMachine{m.accelerator, m.chips_per_vm, m.dims, m.max_chips};
  return std::nullopt;
}

TpuSliceOrError ResolveTpuSlice(const std::string& machine_type, const std::string& topology) {
  auto m = FindTpuMachine(machine_type);
  if (!m) return {std::nullopt, "Machine type \"" + machine_type + "\" is not a TPU machine type."};
  auto d = ParseTopology(topology);
  if (!d || static_cast<int>(d->size()) != m->dims) return Fail(topology, machine_type);
  int chips = 1;
  for (int x : *d) chips *= x;
  if (chips > m->max_chips || chips % m->chips_per_vm != 0) return Fail(topology, machine_type);
  if (m->dims == 2) {
    if (std::find(std::begin(k2dTopologies), std::end(k2dTopologies), topology) ==
        std::end(k2dTopologies))
      return Fail(topology, machine_type);
    // A 1-chip machine is only a 1x1 slice; an 8-chip machine only a 2x4 one.
    if (m->chips_per_vm == 1 && chips != 1) return Fail(topology, machine_type);
    if (m->chips_per_vm == 8 && chips != 8) return Fail(topology, machine_type);
    if (m->chips_per_vm == 4 && chips == 1) return Fail(topology, machine_type);
  } else if (!Valid3d(*d, m->chips_per_vm)) {
    return Fail(topology, machine_type);
  }
  return {TpuSlice{chips, chips / m->chips_per_vm}, ""};
}

}  // namespace tpu::sim
