// Error rendering and error collection for the desired-state types.
#include "manifest/types.h"

#include <algorithm>

namespace tpu::manifest {

std::string Error::ToString() const {
  std::string s = where.file;
  if (where.line > 0) s += ":" + std::to_string(where.line) + ":" + std::to_string(where.column);
  s += ": ";
  if (!field.empty()) s += field + ": ";
  return s + message;
}

std::vector<Error> Repo::AllErrors() const {
  std::vector<Error> all = errors;
  for (const auto& t : targets) all.insert(all.end(), t.errors.begin(), t.errors.end());
  std::stable_sort(all.begin(), all.end(), [](const Error& a, const Error& b) {
    if (a.where.file != b.where.file) return a.where.file < b.where.file;
    if (a.where.line != b.where.line) return a.where.line < b.where.line;
    return a.where.column < b.where.column;
  });
  return all;
}

std::string CapacityName(const Capacity& c) {
  switch (c.type) {
    case CapacityType::kOnDemand: return "onDemand";
    case CapacityType::kSpot: return "spot";
    case CapacityType::kFlexStart: return "flexStart";
    case CapacityType::kReservation:
      return "reservation " + (c.reservation_project.empty() ? "" : c.reservation_project + "/") + c.reservation;
  }
  return "onDemand";
}

}  // namespace tpu::manifest
