// The per-target numbers /status and /metrics show, computed from plain
// values: a target's plan summarised by action kind, the chips its manifests
// declare, and the chips its owned live resources hold.
#pragma once

#include <string>

#include "cloud/types.h"
#include "daemon/daemon_status.h"
#include "manifest/types.h"
#include "plan/model.h"

namespace tpu::daemon {

// Fills report->last_plan and last_plan_actions from `plan` (noops counted in
// the summary, left out of the by-kind map).
void SummarizePlan(const plan::TargetPlan& plan, TargetReport* report);

// Chips per slice × slices of every pool, plus each node group's slice.
int DeclaredChips(const manifest::Target& target);

// Chips in `key`'s owned node pools (ownership label set) in `live`, plus the
// MIGs named like the node groups `declared` lists (Compute objects carry no
// cluster). `declared` may be null (a vanished target).
int LiveChips(const cloud::LiveState& live, const std::string& key, const manifest::Target* declared);

}  // namespace tpu::daemon
