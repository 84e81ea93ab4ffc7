// Test helpers for the Kueue policy: declared pools and a target to compute
// quota from, on top of the Kubernetes emulator helpers.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "kube/kube_test_util.h"
#include "manifest/types.h"

namespace tpu::kube::testing {

// A declared TPUNodePool with its shape from the catalog.
inline manifest::TPUNodePool Pool(const std::string& name, const std::string& accelerator,
                                  const std::string& topology, int slices,
                                  const std::string& machine_type = "") {
  manifest::TPUNodePool p;
  p.name = name;
  auto shape = catalog::ResolveShape(accelerator, topology, machine_type);
  if (!shape.ok()) std::abort();
  p.accelerator = shape->generation->accelerator;
  p.shape = *shape;
  p.slices = slices;
  p.node_count = shape->vms;
  return p;
}

inline manifest::Target Target(std::vector<manifest::TPUNodePool> pools) {
  manifest::Target t;
  t.project = "proj";
  t.cluster = "train";
  t.dir = "deploy/proj/train";
  t.pools = std::move(pools);
  return t;
}

}  // namespace tpu::kube::testing
