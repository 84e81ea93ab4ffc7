// Terminal queries (see terminal.h).
#include "cli/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>


namespace tpu::cli {

std::optional<apply::TerminalSize> TerminalSizeOf(int fd) {
  if (!isatty(fd)) return std::nullopt;
  winsize ws{};
  if (ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0 || ws.ws_row == 0) return std::nullopt;
  return apply::TerminalSize{ws.ws_col, ws.ws_row};
}

bool TerminalReflows(const Env& env) {
  for (const char* var : {"TMUX", "VTE_VERSION", "KITTY_WINDOW_ID", "WT_SESSION", "WEZTERM_PANE"})
    if (auto v = env.Var(var); v && !v->empty()) return true;
  const auto program = env.Var("TERM_PROGRAM");
  if (!program) return false;
  for (const char* name : {"iTerm.app", "WezTerm", "vscode", "tmux", "Apple_Terminal"})
    if (*program == name) return true;
  return false;
}

bool AskYes(std::FILE* in, std::FILE* out, const std::string& prompt) {
  std::fputs(prompt.c_str(), out);
  std::fflush(out);
  char buf[256];
  if (!std::fgets(buf, sizeof buf, in)) {
    std::fputc('\n', out);
    return false;
  }
  std::string answer = buf;
  while (!answer.empty() && (answer.back() == '\n' || answer.back() == '\r')) answer.pop_back();
  return answer == "yes";
}

}  // namespace tpu::cli
