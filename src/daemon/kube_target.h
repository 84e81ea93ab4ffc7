// Which target of a revision the Kubernetes cluster `watch` talks to is: the
// one its Kueue quota follows, its demand-driven pools are made in, and its
// TPUNodeGroups' VMs join. All ask here, so they can never disagree.
#pragma once

#include <string>

#include "manifest/types.h"

namespace tpu::daemon {

enum class KubeTargetUse {
  kKueue,   // the only target with spec.kueue
  kDemand,  // the only target with spec.demand, else the only one with spec.kueue
            // (its pools still need collecting once spec.demand is removed)
  kNodes,   // the only target whose TPUNodeGroups bootstrap Kubernetes, else
            // the only one with spec.kueue
};

struct KubeTargetChoice {
  const manifest::Target* target = nullptr;  // into the repo; null when none
  std::string error;                         // why none, when that is a mistake
};

// `flag` is --kube-target ("project/cluster"); "" chooses by `use`. An unknown
// --kube-target and several candidates are errors; no candidate is not.
KubeTargetChoice ChooseKubeTarget(const manifest::Repo& repo, const std::string& flag, KubeTargetUse use);

}  // namespace tpu::daemon
