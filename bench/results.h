// What the scenarios measure, as plain rows: a figure (median of its runs),
// its unit, the target it is held to, and whether it met it. A figure that
// could not be measured keeps no value and says why; `tpu-bench run --check`
// fails on any such row. Rendered by report.h.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace tpu::bench {

struct Figure {
  std::string scenario;   // "1 cold plan", …
  std::string name;       // "plan wall time (50 ms)"
  std::optional<double> value;
  std::string unit;       // "s", "MB", "calls", "×", "%"
  std::string target;     // "≥ 100×" or "" when the figure is context only
  std::optional<bool> met;
  std::string note;       // runs, or why no value
};

struct Results {
  std::vector<Figure> figures;
  std::vector<std::string> notes;  // free text for the report (settings, caveats)

  Figure& Add(std::string scenario, std::string name, std::optional<double> value, std::string unit,
              std::string note = "") {
    figures.push_back({std::move(scenario), std::move(name), value, std::move(unit), "", {}, std::move(note)});
    return figures.back();
  }
};

// Median of `v` (the lower middle for an even count); nothing when empty.
inline std::optional<double> Median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

}  // namespace tpu::bench
