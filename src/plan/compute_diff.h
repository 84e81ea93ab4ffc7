// The diff of the Compute objects behind a TPUNodeGroup (and tpu7x workload
// policies): workload policies are immutable (a change is a replace); instance
// templates are immutable and named by a content hash, so they are only ever
// created or deleted; a MIG moves to a new template in place (INDIVIDUAL) or is
// replaced (BULK, whose slice is atomic), and is resized in place (INDIVIDUAL)
// or replaced (BULK).
#pragma once

#include <vector>

#include "cloud/types.h"
#include "plan/model.h"

namespace tpu::plan {

struct ComputeDiff {
  ActionKind kind = ActionKind::kNoop;
  std::vector<FieldChange> changes;
  std::vector<UpdateCall> update_calls;
};

ComputeDiff DiffWorkloadPolicy(const cloud::WorkloadPolicy& desired, const cloud::WorkloadPolicy& live);

// BULK or INDIVIDUAL comes from desired.target_size_policy_mode.
ComputeDiff DiffInstanceGroupManager(const cloud::InstanceGroupManager& desired,
                                     const cloud::InstanceGroupManager& live);

}  // namespace tpu::plan
