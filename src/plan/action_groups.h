// Identical actions of a target, grouped for a plan too large to list one by
// one ("+ 40 node pools v6e 4x4 spot (v6e-spot-0 … -39), +640 chips").
// Actions are identical when they do the same thing to the same kind of
// resource of the same capacity shape, with the same changes (field and new
// value); their names, reasons and old values may differ.
#pragma once

#include <string>
#include <vector>

#include "plan/model.h"

namespace tpu::plan {

struct ActionGroup {
  ActionKind kind = ActionKind::kNoop;
  ResourceKind resource_kind = ResourceKind::kNodePool;
  std::string shape;                 // ShapeText(); "" when unknown
  std::string from_shape;            // a replace's old shape, when it differs
  std::vector<const Action*> actions;  // in plan order
  // The changes they share; `before` is "(varies)" where the members differ.
  std::vector<FieldChange> changes;
  std::string reason;  // when every member gives the same one, else ""
  BlastRadius blast;   // summed
};

// The target's actions that change something, grouped, in order of each
// group's first action. The groups point into `target`.
std::vector<ActionGroup> GroupActions(const TargetPlan& target);

// "v6e-spot-0 … -39" for a run of indexes, "a, b, c" for up to three names,
// "a, b, … z" otherwise.
std::string NameRange(const std::vector<const Action*>& actions);

// "node pool", "node pools", "managed instance groups", …
std::string ResourceNoun(ResourceKind kind, size_t count);

}  // namespace tpu::plan
