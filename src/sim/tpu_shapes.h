// A small table of Cloud TPU machine types and the slice topologies GKE
// accepts for them, kept inside the emulator on purpose: the emulator must not
// share the reconciler's catalog (src/catalog), or a wrong catalog entry would
// be confirmed by its own copy instead of being caught.
#pragma once

#include <optional>
#include <string>

namespace tpu::sim {

struct TpuMachine {
  std::string accelerator;  // GKE node label value, e.g. "tpu-v6e-slice"
  int chips_per_vm = 0;
  int dims = 0;             // 2 or 3
  int max_chips = 0;
};

// The TPU machine behind a GCE machine type, or nothing for a non-TPU type.
std::optional<TpuMachine> FindTpuMachine(const std::string& machine_type);

struct TpuSlice {
  int chips = 0;
  int vms = 0;  // nodes per slice; > 1 means multi-host
};

// Checks `topology` (e.g. "2x4", "4x4x4") for `machine_type`. Returns the
// slice, or an error message in GKE's words.
struct TpuSliceOrError {
  std::optional<TpuSlice> slice;
  std::string error;
};
TpuSliceOrError ResolveTpuSlice(const std::string& machine_type, const std::string& topology);

}  // namespace tpu::sim
