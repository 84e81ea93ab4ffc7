// What the CLI asks of the terminal it runs on: whether there is one, its
// size (TIOCGWINSZ), whether it rewraps lines when it narrows, and a yes/no
// question read from it.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

#include "apply/progress.h"
#include "base/env.h"

namespace tpu::cli {

// The window size of the terminal on `fd`; nullopt when `fd` is not a
// terminal or reports no size.
std::optional<apply::TerminalSize> TerminalSizeOf(int fd);

// True when the environment names a terminal that rewraps long lines on a
// resize (tmux, GNOME Terminal and other VTE terminals, kitty, iTerm2,
// WezTerm, Windows Terminal, VS Code). xterm and VT100s truncate instead.
bool TerminalReflows(const Env& env = Env::Default());

// Prints `prompt` to `out` and reads one line from `in`; true only for "yes"
// (Terraform's rule: anything else, or end of input, declines).
bool AskYes(std::FILE* in, std::FILE* out, const std::string& prompt);

}  // namespace tpu::cli
