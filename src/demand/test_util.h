// Test helpers shared by the demand module's unit tests: a policy that allows
// the usual accelerators, a cluster, and a JobSet leader pod asking for TPUs.
#pragma once

#include <string>

#include "demand/names.h"
#include "demand/slice_request.h"
#include "manifest/types.h"

namespace tpu::demand::testing {

inline const std::string kKey = "0123456789abcdef0123456789abcdef01234567";

inline manifest::DemandPolicy Policy() {
  manifest::DemandPolicy p;
  p.accelerators = {"tpu-v6e-slice", "tpu-v5p-slice", "tpu7x", "tpu-v5-lite-podslice"};
  p.capacity_types = {manifest::CapacityType::kOnDemand, manifest::CapacityType::kSpot,
                      manifest::CapacityType::kReservation};
  p.max_chips = 256;
  p.grace_period_seconds = 300;
  return p;
}

inline const ClusterRef kCluster{"proj", "us-east5-b", "c1", ""};

inline LeaderPod Leader(const std::string& jobset, const std::string& key, const std::string& acc,
                 const std::string& topo, int tpu, const std::string& ns = "ml") {
  LeaderPod l;
  l.ns = ns;
  l.name = jobset + "-" + key.substr(0, 4) + "-0";
  l.jobset = jobset;
  l.job_key = key;
  l.accelerator = acc;
  l.topology = topo;
  l.tpu_request = tpu;
  l.requests[kTpuResource] = tpu;
  l.node_selector = {{kAcceleratorSelector, acc}, {kTopologySelector, topo}};
  return l;
}

}  // namespace tpu::demand::testing
