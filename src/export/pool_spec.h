// One live TPU node pool as the spec of a TPUNodePool would say it: only what
// differs from the defaults, the annotations its ownership calls for, or why no
// manifest can say it (a topology the catalog does not know, several zones, any
// reservation).
#pragma once

#include <map>
#include <string>

#include <yaml-cpp/yaml.h>

#include "cloud/types.h"
#include "manifest/types.h"

namespace tpu::exporter {

struct PoolSpec {
  YAML::Node spec;
  manifest::Annotations annotations;
  std::string text;     // the spec emitted: slices of one set must agree on it
  std::string why_not;  // non-empty: this pool cannot be exported
};

// `policy_topologies`: workload policy name → acceleratorTopology, for pools
// whose topology lives in their policy.
PoolSpec SpecOfPool(const cloud::NodePool& lp, const cloud::Cluster& c, const std::string& target_key,
                    const std::map<std::string, std::string>& policy_topologies);

}  // namespace tpu::exporter
