// Shell completion scripts, generated from the command line's own definition
// (the CLI11 app: its subcommands, their options, which take values, which
// repeat), so they never drift from the flags. CLI11 2.1 (Debian bookworm)
// has no generator of its own.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace tpu::cli {

// A bash script for `source` or /etc/bash_completion.d/.
std::string BashCompletion(const CLI::App& app);
// A zsh script (#compdef) for a directory on $fpath, named _tpu-provisioner.
std::string ZshCompletion(const CLI::App& app);

}  // namespace tpu::cli
