// Flavors and nominal quota from declared pools and Ready nodes.
#include "kueue/quota.h"

#include <algorithm>
#include <cctype>

namespace tpu::kueue {
namespace {

void ReplaceAll(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

bool IsReadySchedulable(const nlohmann::json& node) {
  if (node.contains("spec") && node["spec"].value("unschedulable", false)) return false;
  if (!node.contains("status") || !node["status"].contains("conditions")) return false;
  for (const auto& c : node["status"]["conditions"]) {
    if (c.value("type", "") == "Ready") return c.value("status", "") == "True";
  }
  return false;
}

}  // namespace

std::string FlavorName(const KueueConfig& config, const std::string& accelerator,
                       const std::string& topology) {
  std::string name = config.flavor_name;
  const catalog::Generation* gen = catalog::FindGeneration(accelerator);
  ReplaceAll(name, "{accelerator}", accelerator);
  ReplaceAll(name, "{generation}", gen ? gen->name : accelerator);
  ReplaceAll(name, "{topology}", topology);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name;
}

std::map<std::string, int> ReadyNodesByPool(const std::vector<nlohmann::json>& nodes) {
  std::map<std::string, int> out;
  for (const auto& node : nodes) {
    if (!node.contains("metadata") || !node["metadata"].contains("labels")) continue;
    std::string pool = node["metadata"]["labels"].value("cloud.google.com/gke-nodepool", "");
    if (!pool.empty() && IsReadySchedulable(node)) ++out[pool];
  }
  return out;
}

std::vector<FlavorQuota> ComputeQuota(const manifest::Target& target,
                                      const std::map<std::string, int>& ready_nodes,
                                      const KueueConfig& config,
                                      const std::set<std::string>& excluded) {
  std::map<std::string, FlavorQuota> by_flavor;
  for (const auto& pool : target.pools) {
    const int chips_per_node = pool.shape.machine_type.chips_per_vm;
    const std::string flavor = FlavorName(config, pool.accelerator, pool.shape.topology);
    FlavorQuota& fq = by_flavor[flavor];
    fq.flavor = flavor;
    fq.accelerator = pool.accelerator;
    fq.topology = pool.shape.topology;
    for (int i = 0; i < pool.slices; ++i) {
      const std::string name = pool.PoolName(i);
      if (excluded.count(name)) continue;
      fq.node_pools.push_back(name);
      const int64_t declared = int64_t{pool.node_count} * chips_per_node;
      fq.declared_chips += declared;
      auto ready = ready_nodes.find(name);
      int ready_count = ready == ready_nodes.end() ? 0 : std::min(ready->second, pool.node_count);
      if (pool.autoscaled() || pool.capacity.type == manifest::CapacityType::kFlexStart) {
        // Possible, not ready: its nodes come and go with the bookings.
        fq.possible_chips += declared;
      } else if (pool.shape.multi_host) {
        // A multi-host slice runs nothing until every host is up.
        fq.ready_chips += ready_count == pool.node_count ? declared : 0;
      } else {
        fq.ready_chips += int64_t{ready_count} * chips_per_node;
      }
    }
  }
  std::vector<FlavorQuota> out;
  for (auto& [name, fq] : by_flavor) {
    fq.nominal_quota = config.mode == QuotaMode::kReady
                           ? std::min(fq.declared_chips, fq.ready_chips + fq.possible_chips)
                           : fq.declared_chips;
    out.push_back(std::move(fq));
  }
  return out;
}

int64_t ParseQuantity(const nlohmann::json& q) {
  if (q.is_number_integer()) return q.get<int64_t>();
  if (q.is_number()) return static_cast<int64_t>(q.get<double>());
  if (!q.is_string()) return 0;
  const std::string s = q.get<std::string>();
  size_t end = 0;
  int64_t n = 0;
  try {
    n = std::stoll(s, &end);
  } catch (...) {
    return 0;
  }
  const std::string suffix = s.substr(end);
  static const std::map<std::string, int64_t> kScale = {
      {"", 1}, {"k", 1000}, {"M", 1000000}, {"G", 1000000000}, {"Ki", 1024}, {"Mi", 1048576}};
  auto it = kScale.find(suffix);
  return it == kScale.end() ? 0 : n * it->second;
}

}  // namespace tpu::kueue
