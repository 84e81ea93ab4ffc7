// Safety guards run over a target's finished plan (docs/architecture.md, "Plan rules"). A guard that
// trips marks the target kRefused with an error saying what to change; the
// actions stay in the plan so a person sees what would have happened, but
// apply executes only kPlanned targets.
//
// - prevent-destroy: a delete or replace of a resource that carries the
//   prevent-destroy marker (node pools: resource label; Compute: description).
// - maxDeletePercent: the target's deletes destroy more than that share of the
//   chips it owns, and --allow-mass-delete was not given. A vanished target
//   deletes everything it owns, so it trips this unless allowed.
#pragma once

#include "plan/model.h"

namespace tpu::plan {

// Computes delete_chips and applies both guards. REQUIRES: owned_chips and
// max_delete_percent are set.
void ApplyGuards(TargetPlan& target, bool allow_mass_delete);

// True when the action's body carries the prevent-destroy marker.
bool PreventsDestroy(const Action& action);

}  // namespace tpu::plan
