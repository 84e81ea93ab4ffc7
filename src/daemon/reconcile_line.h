// The one log line each reconcile writes: key=value pairs, so a single grep
// works whether --log-format is text or json (the pairs sit inside the message).
#pragma once

#include <string>

#include "daemon/reconciler.h"

namespace tpu::daemon {

// The one line per reconcile: "reconcile revision=… full=… targets=… actions=create:1,… applied=…
// failed=… blocked=… parsed=… duration=…s" (+ " error=…").
std::string ReconcileLine(const CycleReport& report);

}  // namespace tpu::daemon
