// Durations as people write them on a command line: "90s", "5m", "1h30m",
// "250ms", or a bare number of seconds. Used by `watch` for --poll-interval,
// --drift-interval and --shutdown-timeout.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tpu::cli {

// InvalidArgument naming the text when it is empty, negative, has an unknown
// unit, or overflows.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

// "5m", "1h30m", "250ms", "0s": the shortest spelling ParseDuration reads back.
std::string FormatDuration(std::chrono::milliseconds d);

}  // namespace tpu::cli
