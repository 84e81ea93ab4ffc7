// Join keys on instance metadata: see instance_keys.h.
#include "nodes/instance_keys.h"

namespace tpu::nodes {
namespace {

using Items = std::vector<std::pair<std::string, std::string>>;

// The items after the change, and whether they differ from `items`.
bool Merge(const Items& items, const std::map<std::string, std::string>& set, const std::set<std::string>& remove,
           Items* out) {
  bool changed = false;
  std::set<std::string> seen;
  for (const auto& [k, v] : items) {
    if (remove.count(k)) {
      changed = true;
      continue;
    }
    auto s = set.find(k);
    if (s != set.end()) {
      seen.insert(k);
      changed |= s->second != v;
      out->emplace_back(k, s->second);
    } else {
      out->emplace_back(k, v);
    }
  }
  for (const auto& [k, v] : set)
    if (!seen.count(k)) {
      out->emplace_back(k, v);
      changed = true;
    }
  return changed;
}

}  // namespace

Result<bool> UpdateInstanceMetadata(cloud::ComputeClient& compute, const InstanceRef& vm,
                                    const std::map<std::string, std::string>& set,
                                    const std::set<std::string>& remove) {
  for (int attempt = 0; attempt < kMetadataAttempts; ++attempt) {
    auto instance = compute.GetInstance(vm.project, vm.zone, vm.name);
    if (!instance.ok()) return instance.status();
    Items next;
    if (!Merge(instance->metadata, set, remove, &next)) return false;
    auto op = compute.SetInstanceMetadata(vm.project, vm.zone, vm.name, instance->metadata_fingerprint, next);
    if (op.ok()) return true;
    if (!op.error().precondition_failed()) return op.status();
  }
  return Status::Unavailable("instances/" + vm.name + ": metadata kept changing under us (" +
                             std::to_string(kMetadataAttempts) + " fingerprint conflicts)");
}

Result<std::map<std::string, std::string>> ReadJoinKeys(cloud::ComputeClient& compute, const InstanceRef& vm) {
  auto instance = compute.GetInstance(vm.project, vm.zone, vm.name);
  if (!instance.ok()) return instance.status();
  std::map<std::string, std::string> keys = {{kJoinTokenKey, ""}, {kControlPlaneKey, ""}, {kCaHashKey, ""}};
  for (const auto& [k, v] : instance->metadata)
    if (keys.count(k)) keys[k] = v;
  return keys;
}

}  // namespace tpu::nodes
