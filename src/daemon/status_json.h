// StatusJson: the /status document. One JSON object:
//   {"source","revision","lastAppliedRevision","ready","dryRun","lastError",
//    "repoErrors":[…], "historyRewrite":{"from","to","held"} | null,
//    "targets":[{"target","state","revision","lastPlan":{"create","update",
//      "replace","delete","noop","chipsCreated","chipsDestroyed","actions":{kind:n}},
//      "errors":[…],"lastError","consecutiveFailures","retryInSeconds",
//      "declaredChips","liveChips","vanished"}]}
// Field names are camelCase like the Kubernetes and GCP APIs beside it.
#pragma once

#include <nlohmann/json.hpp>

#include "daemon/daemon_status.h"

namespace tpu::daemon {

nlohmann::json StatusJson(const DaemonStatus& status);

}  // namespace tpu::daemon
