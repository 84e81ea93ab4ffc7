// Reads and writes the emulator's state file. Writes are atomic: the JSON goes
// to a temporary file beside the target, is fsynced, and renamed over it, so a
// crash leaves either the old state or the new one, never half of either.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "sim/sim_http.h"

namespace tpu::sim {

Status WriteStateFile(const std::string& path, const json& state);
// Nothing when the file does not exist; an error when it exists but is unreadable.
Result<std::optional<json>> ReadStateFile(const std::string& path);

}  // namespace tpu::sim
