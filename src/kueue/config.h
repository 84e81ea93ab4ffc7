// What a cluster's `Cluster.spec.kueue` asks of the quota sync: where the TPU
// quota goes (a ClusterQueue or a Cohort), how flavors are named, whether
// quota follows declared or Ready capacity, and what a scale-down does while
// admitted workloads still use the capacity. Parsed from the JSON subtree the
// manifest loader hands over; the YAML shape is in docs/kueue.md.
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "manifest/types.h"

namespace tpu::kueue {

using json = nlohmann::json;

enum class QuotaMode {
  kDeclared,  // quota = what git declares
  kReady,     // quota = min(declared, chips on Ready, schedulable nodes of our pools)
};

// ClusterQueue spec.stopPolicy while a scale-down waits (Kueue's values).
enum class HoldPolicy { kNone, kHold, kHoldAndDrain };

struct KueueConfig {
  std::string cluster_queue;  // exactly one of cluster_queue and cohort
  std::string cohort;
  std::string resource = "google.com/tpu";  // the covered resource we manage
  // Placeholders: {accelerator} (GKE label), {generation} (v5e), {topology}.
  std::string flavor_name = "{accelerator}-{topology}";
  QuotaMode mode = QuotaMode::kDeclared;
  HoldPolicy hold = HoldPolicy::kNone;
  std::chrono::seconds scale_down_timeout{3600};  // then proceed anyway
  std::string api_version;  // "" : v1beta2 when served, else v1beta1
  std::string event_namespace = "default";  // Events about cluster-scoped objects

  bool cohort_mode() const { return !cohort.empty(); }
  const std::string& queue_name() const { return cohort_mode() ? cohort : cluster_queue; }
};

// Errors name the field: "spec.kueue.mode: expected declared or ready, got \"x\"".
Result<KueueConfig> ParseKueueConfig(const nlohmann::json& spec_kueue);

// From the loader's typed KueuePolicy (the spec.kueue the Cluster schema
// accepts): queue or cohort, mode, flavorName, scaleDownTimeout;
// waitForWorkloads=false proceeds at once; holdQueue sets Hold. Everything
// else keeps its default.
KueueConfig KueueConfigFromPolicy(const manifest::KueuePolicy& policy);

// "90s", "15m", "1h", "1h30m"; false when malformed.
bool ParseDuration(const std::string& text, std::chrono::seconds* out);

}  // namespace tpu::kueue
