// ChooseKubeTarget: see kube_target.h.
#include "daemon/kube_target.h"

#include <vector>

namespace tpu::daemon {
namespace {

std::vector<const manifest::Target*> With(const manifest::Repo& repo, bool (*has)(const manifest::Target&)) {
  std::vector<const manifest::Target*> out;
  for (const auto& t : repo.targets)
    if (has(t)) out.push_back(&t);
  return out;
}

bool HasKueue(const manifest::Target& t) { return t.policy.kueue.has_value(); }
bool HasDemand(const manifest::Target& t) { return t.policy.demand.has_value(); }
bool HasJoiningGroups(const manifest::Target& t) {
  for (const auto& g : t.groups)
    if (g.bootstrap_kubernetes) return true;
  return false;
}

}  // namespace

KubeTargetChoice ChooseKubeTarget(const manifest::Repo& repo, const std::string& flag, KubeTargetUse use) {
  KubeTargetChoice c;
  if (!flag.empty()) {
    for (const auto& t : repo.targets)
      if (t.Key() == flag) c.target = &t;
    if (!c.target) c.error = "--kube-target " + flag + ": no such target in the revision";
    return c;
  }
  const char* field = "spec.kueue";
  std::vector<const manifest::Target*> candidates;
  if (use == KubeTargetUse::kDemand) {
    candidates = With(repo, HasDemand);
    field = "spec.demand";
  } else if (use == KubeTargetUse::kNodes) {
    candidates = With(repo, HasJoiningGroups);
    field = "TPUNodeGroups with spec.bootstrapKubernetes";
  }
  if (candidates.empty()) {
    candidates = With(repo, HasKueue);
    field = "spec.kueue";
  }
  if (candidates.size() == 1) {
    c.target = candidates[0];
  } else if (candidates.size() > 1) {
    c.error = std::string("several targets have ") + field + " (";
    for (size_t i = 0; i < candidates.size(); ++i) c.error += (i ? ", " : "") + candidates[i]->Key();
    c.error += "); say which one this Kubernetes cluster is with --kube-target";
  }
  return c;
}

}  // namespace tpu::daemon
