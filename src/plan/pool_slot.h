// Slots: which desired node pool a live pool stands for, and the temporary
// name a create-before-delete replacement gets (docs/architecture.md, "Plan rules" and "Apply rules").
//
// A slot is a desired pool's canonical name, `<TPUNodePool name>-<slice>`.
// Normally the live pool filling it has that name. With `replaceStrategy:
// CreateBeforeDelete` the replacement must exist beside the pool it replaces,
// so it is created as ReplacementPoolName(): the slot name (cut to fit GKE's
// 40 characters) + "-r" + 8 hex digits of a hash of the slot and the desired
// pool. The name is deterministic, so a run that crashed between the create
// and the delete computes it again and finds the pool it made. A pool whose
// name is not its slot's carries the resource label kSlotLabel=<slot>; the
// planner takes a live pool with that label as filling the slot, so the plan
// after the replace reports no changes and never renames it back. Canonical
// names end in digits and replacement names in "-r<hex>", so they never clash.
#pragma once

#include <string>

#include "cloud/types.h"

namespace tpu::plan {

// Resource label on a pool whose name is not its slot's: the slot it fills.
inline constexpr const char* kSlotLabel = "tpu-provisioner-slot";

// GKE's limit on node pool names.
inline constexpr size_t kMaxPoolNameLength = 40;

// The name a create-before-delete replacement of slot `desired.name` gets.
// `desired` is the pool as the manifest wants it (its labels included); the
// hash covers it so a changed spec gives a new name. REQUIRES: desired.name is the slot.
std::string ReplacementPoolName(const cloud::NodePool& desired);

// The slot a live pool fills: its kSlotLabel, else its own name.
std::string SlotOf(const cloud::NodePool& pool);

// `desired` (named for its slot) as the pool called `name`: renamed, and
// labelled with kSlotLabel when `name` is not the slot's.
cloud::NodePool AsPoolNamed(const cloud::NodePool& desired, const std::string& name);

}  // namespace tpu::plan
