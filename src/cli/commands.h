// The subcommands of `tpu-provisioner`. Each lives in its own cmd_*.cc file and
// registers itself on the root CLI11 app; main.cc is the one place that wires
// them. A command's callback stores its process exit code in `exit_code`.
#pragma once

#include <CLI/CLI.hpp>

namespace tpu::cli {

struct CommandContext {
  int exit_code = 0;
};

void AddCatalogCommand(CLI::App& app, CommandContext& ctx);
void AddPlanCommand(CLI::App& app, CommandContext& ctx);
void AddApplyCommand(CLI::App& app, CommandContext& ctx);
void AddValidateCommand(CLI::App& app, CommandContext& ctx);
void AddWatchCommand(CLI::App& app, CommandContext& ctx);
void AddSimCommand(CLI::App& app, CommandContext& ctx);
void AddExportCommand(CLI::App& app, CommandContext& ctx);
// Registered last: it describes every command registered before it.
void AddCompletionCommand(CLI::App& app, CommandContext& ctx);
// Hidden, after completion so completion leaves it out: watch's fetch child.
void AddGitFetchCommand(CLI::App& app, CommandContext& ctx);

}  // namespace tpu::cli
