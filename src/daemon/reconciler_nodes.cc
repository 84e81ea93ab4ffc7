// The reconciler's side of the TPUNodeGroup node join (docs/architecture.md,
// "TPUNodeGroup nodes"): which target's groups join, and teardown's first step.
#include <spdlog/spdlog.h>

#include "daemon/kube_target.h"
#include "daemon/reconciler.h"

namespace tpu::daemon {

void Reconciler::HandNodeGroups(Cycle& c) {
  KubeTargetChoice choice = ChooseKubeTarget(*c.repo, options_.kube_target, KubeTargetUse::kNodes);
  // A broken revision says nothing reliable about the groups: the join goes
  // on with the last good one, and no Node is judged stale because of it.
  if (!choice.target || choice.target->blocked() || !Owns(choice.target->Key())) return;
  c.nodes_target = choice.target->Key();
  options_.nodes->SetTarget(*choice.target);
}

void Reconciler::CordonBeforeTeardown(const Cycle& c) {
  for (const auto& t : c.to_apply.targets) {
    if (t.key != c.nodes_target) continue;
    for (const auto& a : t.actions) {
      if (a.resource.kind != plan::ResourceKind::kInstanceGroupManager || !a.destructive()) continue;
      // The MIG is named after its group; a failed cordon does not hold the
      // apply (git asked for the teardown), it is only reported.
      Status s = options_.nodes->Cordon(a.resource.name);
      if (!s.ok()) spdlog::warn("nodes: cordoning TPUNodeGroup {} before its teardown: {}", a.resource.name, s.ToString());
    }
  }
}

}  // namespace tpu::daemon
