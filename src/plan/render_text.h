// The plan as text for people, in Terraform's idiom: `+ create`, `~ update in
// place`, `-/+ replace`, `- delete`, the differing fields before → after, the
// chips and hosts each action creates or destroys, and a summary line
// "Plan: N to create, N to update, N to replace, N to delete." with the chips
// created and destroyed, in total and by generation and capacity type. A plan
// of more than `summary_over` actions is shown grouped (action_groups.h),
// one line per group of identical actions, unless `full`.
#pragma once

#include <string>

#include "plan/model.h"

namespace tpu::plan {

// Above this many actions a plan is shown grouped (`--summary-over`).
inline constexpr int kDefaultSummaryOver = 200;

struct TextOptions {
  bool color = false;      // ANSI colours; the CLI sets it only on a terminal
  bool show_noop = false;  // list in-sync resources too (full listings only)
  int summary_over = kDefaultSummaryOver;
  bool full = false;       // every action, however many (`--full`)
};

std::string RenderText(const Plan& plan, const TextOptions& options = {});

}  // namespace tpu::plan
