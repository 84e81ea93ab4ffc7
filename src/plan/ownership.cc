// Ownership markers on node pools (resource labels) and Compute objects (description).
#include "plan/ownership.h"

#include <sstream>

#include "plan/fingerprint.h"

namespace tpu::plan {

std::string TargetHash(std::string_view target_key) { return Fnv1aHex(target_key); }

bool HasResourceLabel(const cloud::NodePool& pool, const char* label, std::string_view value) {
  if (!pool.resource_labels) return false;
  auto it = pool.resource_labels->find(label);
  return it != pool.resource_labels->end() && it->second == value;
}

Ownership PoolOwnership(const cloud::NodePool& pool, std::string_view target_key) {
  if (!HasResourceLabel(pool, cloud::kManagedLabel, "true")) return Ownership::kUnmanaged;
  return PoolOwnershipByHash(pool, TargetHash(target_key));
}

Ownership PoolOwnershipByHash(const cloud::NodePool& pool, std::string_view target_hash) {
  if (!HasResourceLabel(pool, cloud::kManagedLabel, "true")) return Ownership::kUnmanaged;
  if (!HasResourceLabel(pool, cloud::kTargetHashLabel, target_hash)) return Ownership::kForeign;
  return Ownership::kOwned;
}

std::string ComputeDescription(const ComputeMarker& marker) {
  return std::string(cloud::kComputeMarker) + " target=" + marker.target + " owner=" + marker.owner +
         (marker.prevent_destroy ? " prevent-destroy=true" : "");
}

std::optional<ComputeMarker> ParseComputeDescription(std::string_view description) {
  // Words split on the characters `std::istream >> std::string` splits on in
  // the C locale; planning reads every MIG's description once per target.
  auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  bool marked = false;
  ComputeMarker m;
  size_t i = 0;
  while (i < description.size()) {
    while (i < description.size() && space(description[i])) ++i;
    size_t end = i;
    while (end < description.size() && !space(description[end])) ++end;
    std::string_view word = description.substr(i, end - i);
    i = end;
    if (word.empty()) break;
    if (word == cloud::kComputeMarker) marked = true;
    else if (word.rfind("target=", 0) == 0) m.target = word.substr(7);
    else if (word.rfind("owner=", 0) == 0) m.owner = word.substr(6);
    else if (word == "prevent-destroy=true") m.prevent_destroy = true;
  }
  if (!marked) return std::nullopt;
  return m;
}

}  // namespace tpu::plan
