// Log lines through spdlog in the format --log-format asks for: "text" (a
// timestamp, the level, the message) or "json" (one object per line: time,
// level, msg), applied to every logger so other modules' lines stay valid
// JSON too.
#pragma once

#include <string>

#include "base/status.h"

namespace tpu::cli {

enum class LogFormat { kText, kJson };

// InvalidArgument unless "text" or "json".
Result<LogFormat> ParseLogFormat(const std::string& name);
// Sets the default logger's pattern.
void ConfigureLogging(LogFormat format);

}  // namespace tpu::cli
