// Log lines through spdlog in the format --log-format asks for: "text" (a
// timestamp, the level, the message) or "json" (one object per line: time,
// level, msg), applied to every logger so other modules' lines stay valid
// JSON too. Reconcile lines carry key=value pairs in the message in both
// formats, so one grep works on either.
#pragma once

#include <string>

#include "base/status.h"
#include "daemon/reconciler.h"

namespace tpu::daemon {

enum class LogFormat { kText, kJson };

// InvalidArgument unless "text" or "json".
Result<LogFormat> ParseLogFormat(const std::string& name);
// Sets the default logger's pattern.
void ConfigureLogging(LogFormat format);

// The one line per reconcile: "reconcile revision=… full=… targets=… actions=create:1,… applied=…
// failed=… blocked=… parsed=… duration=…s" (+ " error=…").
std::string ReconcileLine(const CycleReport& report);

}  // namespace tpu::daemon
