// The plan as text for people, in Terraform's idiom: `+ create`, `~ update in
// place`, `-/+ replace`, `- delete`, the differing fields before → after, the
// chips and hosts each action creates or destroys, and a summary line
// "Plan: N to create, N to update, N to replace, N to delete.".
#pragma once

#include <string>

#include "plan/model.h"

namespace tpu::plan {

struct TextOptions {
  bool color = false;      // ANSI colours; the CLI sets it only on a terminal
  bool show_noop = false;  // list in-sync resources too
};

std::string RenderText(const Plan& plan, const TextOptions& options = {});

}  // namespace tpu::plan
