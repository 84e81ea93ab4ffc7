// The API steps that carry out one plan action (docs/architecture.md, "Apply rules"): which calls, in
// which order, which errors are fine (a delete that finds nothing), and what a
// stockout cleans up. Node pools: create, delete, resize, the in-place update
// calls, and replace as delete-then-create (DeleteBeforeCreate, the default:
// TPU capacity and reservations are scarce) or, when the plan named the
// replacement differently (CreateBeforeDelete, plan/pool_slot.h), as
// create-then-delete; a stockout of that create deletes only the new pool, so
// the old one keeps serving. Compute: insert and delete of workload policies,
// instance templates and MIGs (a MIG replace always deletes first), MIG resize.
#pragma once

#include <vector>

#include "apply/step_task.h"
#include "cloud/compute_client.h"
#include "cloud/gke_client.h"
#include "plan/model.h"

namespace tpu::apply {

struct Clients {
  cloud::GkeClient* gke = nullptr;
  cloud::ComputeClient* compute = nullptr;
  cloud::OperationPoller* poller = nullptr;
  // The apply's polls, batched per project; null: a GET per poll.
  cloud::OperationWatch* watch = nullptr;
};

// The steps for `action`, or an error for an action apply cannot carry out.
Result<std::vector<Step>> StepsFor(const plan::Action& action, const plan::TargetPlan& target,
                                   const Clients& clients);

// A step that only waits for an operation someone already started (a previous,
// interrupted run): found through the operations list, never held in memory.
Step AwaitExisting(const cloud::Operation& op);

}  // namespace tpu::apply
