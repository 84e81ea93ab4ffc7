// The plan as GitHub-flavoured Markdown for a pull request (a job summary or
// a comment), written so a reviewer gets it in ten seconds: a guard that
// refuses or blocks a target first, then the totals (actions, chips ±, hosts
// ±), a table with one row per target, and one collapsible <details> section
// per target with its actions.
//
// Forges cap a comment or a summary (GitHub: 65,536 characters), and a plan
// cut at a byte count hides exactly what a reviewer must see. So the output
// always fits `max_bytes`: the details of the largest targets are shortened
// first to grouped lines (action_groups.h), then left out, and the text says
// which targets were shortened and where the whole plan is; only if even the
// table cannot fit are its last rows replaced by a count.
#pragma once

#include <cstddef>
#include <string>

#include "plan/model.h"

namespace tpu::plan {

// GitHub's limit on a comment and a step summary is 65,536; a little room is
// left for a forge or a bot that wraps the text.
inline constexpr size_t kDefaultMarkdownMaxBytes = 65000;

struct MarkdownOptions {
  size_t max_bytes = kDefaultMarkdownMaxBytes;  // `--max-bytes`
  // Where the complete plan is, named when details are shortened
  // ("the JSON plan artifact").
  std::string full_plan_hint = "`plan -o json` lists every action";
};

std::string RenderMarkdown(const Plan& plan, const MarkdownOptions& options = {});

}  // namespace tpu::plan
