// What kind of TPU capacity an action's chips are — generation, slice
// topology, capacity type — for people reading a plan: `plan`'s summary mode
// groups actions by it, and the totals line counts chips by generation and
// capacity type. Read from the bodies the plan already holds (the desired
// pool or group, the live one for a delete and the old side of a replace).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cloud/types.h"
#include "plan/model.h"

namespace tpu::plan {

// The shape of a node pool body (desired or live). `topology` is filled from
// the placement policy, or from the machine type for a single-host pool;
// `policies` gives a tpu7x workload policy's topology by policy name.
CapacityShape ShapeOfPool(const cloud::NodePool& pool,
                          const std::map<std::string, std::string>& policy_topologies = {});

// Fills created_shape and destroyed_shape of every pool and MIG action of
// `target`, from the action bodies and `live` (null when nothing is live).
void AddCapacityShapes(TargetPlan* target, const cloud::ProjectState* live);

// "v6e 4x4 spot"; "" when unknown.
std::string ShapeText(const CapacityShape& s);

// Chips created and destroyed per "generation capacity" ("v6e spot"), in the
// catalog's generation order, over the executable targets' actions.
struct ShapeChips {
  std::string key;  // "v6e spot"
  int created = 0;
  int destroyed = 0;
};
std::vector<ShapeChips> ChipsByGenerationAndCapacity(const Plan& plan);

}  // namespace tpu::plan
