// Slot labels and create-before-delete replacement names (see pool_slot.h).
#include "plan/pool_slot.h"

#include "plan/fingerprint.h"
#include "plan/resource_json.h"

namespace tpu::plan {

std::string ReplacementPoolName(const cloud::NodePool& desired) {
  const std::string& slot = desired.name;
  // The hash reads the whole desired pool (name included), so two slots or two
  // specs of one slot never share a replacement name.
  std::string hash = Fnv1aHex(NodePoolToJson(desired).dump()).substr(0, 8);
  const std::string suffix = "-r" + hash;
  std::string base = slot.substr(0, kMaxPoolNameLength - suffix.size());
  return base + suffix;
}

std::string SlotOf(const cloud::NodePool& pool) {
  if (pool.resource_labels) {
    auto it = pool.resource_labels->find(kSlotLabel);
    if (it != pool.resource_labels->end() && !it->second.empty()) return it->second;
  }
  return pool.name;
}

cloud::NodePool AsPoolNamed(const cloud::NodePool& desired, const std::string& name) {
  cloud::NodePool p = desired;
  if (name == desired.name) return p;
  p.name = name;
  if (!p.resource_labels) p.resource_labels = cloud::StringMap{};
  (*p.resource_labels)[kSlotLabel] = desired.name;
  return p;
}

}  // namespace tpu::plan
