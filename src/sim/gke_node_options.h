// The rules GKE applies to a node pool's node options on create: pods per
// node, the boot disk's KMS key, secondary boot disks, additional node
// networks, Shielded VM settings (docs/emulator.md lists each rule with its
// public source). Pure: reads the request's NodePool only.
#pragma once

#include <optional>

#include "sim/cloud_errors.h"
#include "sim/sim_http.h"

namespace tpu::sim {

// `np` is the request's NodePool (JSON names). nullopt when it passes.
std::optional<ApiError> CheckNodeOptions(const json& np);

}  // namespace tpu::sim
