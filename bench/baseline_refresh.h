// The baseline of scenario 1: refresh the way Terraform does, one GET per
// resource it manages (every node pool, workload policy, instance template and
// MIG), `parallelism` requests at a time (Terraform's -parallelism, default
// 10). The list of resources is what Terraform would keep in its state file:
// here, the keys of the emulator's state file. The repo is loaded first with
// the project's loader, as plan does, so both sides read the manifests.
#pragma once

#include <string>

#include "base/status.h"

namespace tpu::bench {

struct BaselineSummary {
  int resources = 0;  // GETs made
  int found = 0;      // GETs that returned the resource
};

Result<BaselineSummary> RunBaselineRefresh(const std::string& repo, const std::string& state_file,
                                           const std::string& endpoint, int parallelism);

}  // namespace tpu::bench
