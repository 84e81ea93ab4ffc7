// ReconcileLine: see reconcile_line.h.
#include "daemon/reconcile_line.h"

#include <cstdio>

namespace tpu::daemon {

std::string ReconcileLine(const CycleReport& r) {
  std::string actions;
  for (const auto& [kind, n] : r.actions) actions += (actions.empty() ? "" : ",") + kind + ":" + std::to_string(n);
  if (actions.empty()) actions = "none";
  std::string targets;
  for (const auto& t : r.planned_targets) targets += (targets.empty() ? "" : ",") + t;
  if (targets.empty()) targets = "none";
  char duration[32];
  std::snprintf(duration, sizeof duration, "%.3fs", r.duration.count() / 1000.0);
  std::string line = "reconcile revision=" + (r.revision.empty() ? "-" : r.revision) +
                     " full=" + (r.full ? "true" : "false") + " targets=" + targets +
                     " actions=" + actions + " applied=" + std::to_string(r.applied) +
                     " failed=" + std::to_string(r.failed) +
                     " waiting=" + std::to_string(r.waiting_for_capacity) +
                     " blocked=" + std::to_string(r.blocked) +
                     " parsed=" + std::to_string(r.files_parsed) + " duration=" + duration;
  if (!r.error.ok()) line += " error=\"" + r.error.ToString() + "\"";
  return line;
}

}  // namespace tpu::daemon
