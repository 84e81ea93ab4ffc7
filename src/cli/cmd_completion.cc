// `tpu-provisioner completion bash|zsh`: prints a shell completion script for
// every command and flag (completion.h).
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/completion.h"

namespace tpu::cli {

void AddCompletionCommand(CLI::App& app, CommandContext& ctx) {
  auto shell = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("completion", "Print a shell completion script (bash or zsh)");
  cmd->add_option("shell", *shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
  cmd->footer(
      "Examples:\n"
      "  source <(tpu-provisioner completion bash)                  # this bash session\n"
      "  tpu-provisioner completion bash > /etc/bash_completion.d/tpu-provisioner\n"
      "  tpu-provisioner completion zsh > \"${fpath[1]}/_tpu-provisioner\"");
  const CLI::App* root = &app;
  cmd->callback([shell, root, &ctx] {
    std::string script = *shell == "bash" ? BashCompletion(*root) : ZshCompletion(*root);
    std::fputs(script.c_str(), stdout);
    ctx.exit_code = 0;
  });
}

}  // namespace tpu::cli
