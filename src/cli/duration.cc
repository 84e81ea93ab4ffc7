// ParseDuration / FormatDuration: see duration.h.
#include "cli/duration.h"

#include <cctype>
#include <cstdint>

namespace tpu::cli {

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("duration \"" + std::string(text) + "\": " + why +
                                   " (expected e.g. 30s, 5m, 1h30m, 250ms)");
  };
  if (text.empty()) return bad("empty");
  int64_t total_ms = 0;
  size_t i = 0;
  bool any = false;
  while (i < text.size()) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return bad("expected a number");
    int64_t n = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      n = n * 10 + (text[i] - '0');
      if (n > (int64_t{1} << 40)) return bad("too large");
      ++i;
    }
    size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    int64_t scale;
    if (unit == "ms") scale = 1;
    else if (unit == "s" || (unit.empty() && !any && i == text.size())) scale = 1000;
    else if (unit == "m") scale = 60 * 1000;
    else if (unit == "h") scale = 3600 * 1000;
    else return bad(unit.empty() ? "missing unit" : "unknown unit \"" + std::string(unit) + "\"");
    total_ms += n * scale;
    any = true;
  }
  return std::chrono::milliseconds(total_ms);
}

std::string FormatDuration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms == 0) return "0s";
  if (ms % 1000 != 0) return std::to_string(ms) + "ms";
  int64_t s = ms / 1000;
  std::string out;
  if (s >= 3600) { out += std::to_string(s / 3600) + "h"; s %= 3600; }
  if (s >= 60) { out += std::to_string(s / 60) + "m"; s %= 60; }
  if (s > 0) out += std::to_string(s) + "s";
  return out;
}

}  // namespace tpu::cli
