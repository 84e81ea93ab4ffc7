// Quota follows capacity, as a pure computation: from a target's declared
// TPU node pools and the cluster's Nodes, the ResourceFlavors it needs (one
// per accelerator+topology) and each flavor's nominal quota of TPU chips.
// No I/O: QuotaSync reads and writes the cluster.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kueue/config.h"
#include "manifest/types.h"

namespace tpu::kueue {

struct FlavorQuota {
  std::string flavor;  // ResourceFlavor name
  std::string accelerator;
  std::string topology;
  int64_t declared_chips = 0;  // what git declares
  // On Ready, schedulable nodes of the declared pools that are always up
  // (not autoscaled): capacity that is there now.
  int64_t ready_chips = 0;
  // Of declared_chips: autoscaled pools' (a multi-host slice 0 ↔ its VMs,
  // flex-start), possible capacity whose nodes come only once a workload is
  // admitted and the autoscaler (or the Dynamic Workload Scheduler) asks.
  // Never ready capacity, yet quota in both modes: else a ready-mode queue
  // would never admit the workload that brings them up.
  int64_t possible_chips = 0;
  // What is written: declared_chips, or in ready mode
  // min(declared, ready + possible).
  int64_t nominal_quota = 0;
  std::vector<std::string> node_pools;  // GKE node pool names counted

  bool operator==(const FlavorQuota&) const = default;
};

// "{accelerator}-{topology}" and friends, lower-cased.
std::string FlavorName(const KueueConfig& config, const std::string& accelerator,
                       const std::string& topology);

// Ready, schedulable nodes by their cloud.google.com/gke-nodepool label.
std::map<std::string, int> ReadyNodesByPool(const std::vector<nlohmann::json>& nodes);

// Flavors sorted by name. Node pools named in `excluded` count for nothing:
// they are about to be deleted or shrunk (the scale-down gate lowers quota first).
std::vector<FlavorQuota> ComputeQuota(const manifest::Target& target,
                                      const std::map<std::string, int>& ready_nodes,
                                      const KueueConfig& config,
                                      const std::set<std::string>& excluded = {});

// A Kubernetes quantity as a whole number ("24", 24, "1k"); 0 when it is not one.
int64_t ParseQuantity(const nlohmann::json& q);

}  // namespace tpu::kueue
