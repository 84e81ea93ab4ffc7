// The reconciler's side of the TPUNodeGroup node join (docs/architecture.md,
// "TPUNodeGroup nodes"): which target's groups join, and teardown's first step.
#include <spdlog/spdlog.h>

#include <map>
#include <utility>

#include "daemon/kube_target.h"
#include "daemon/reconciler.h"

namespace tpu::daemon {

void Reconciler::HandNodeGroups(Cycle& c) {
  KubeTargetChoice choice = ChooseKubeTarget(*c.repo, options_.kube_target, KubeTargetUse::kNodes);
  const manifest::Target* target = choice.target;
  manifest::Target gone;
  if (!target && choice.error.empty() && !nodes_target_.empty()) {
    // The last groups that joined were removed (or their whole directory):
    // the join goes on over what is left, so their tokens and the Nodes of
    // their deleted VMs are cleaned up.
    auto it = c.declared.find(nodes_target_);
    if (it != c.declared.end()) {
      target = it->second;
    } else {
      gone.project = nodes_target_.substr(0, nodes_target_.find('/'));
      gone.cluster = nodes_target_.substr(nodes_target_.find('/') + 1);
      target = &gone;
    }
  }
  // A broken revision says nothing reliable about the groups: the join goes
  // on with the last good one, and no Node is judged stale because of it.
  if (!target || target->blocked() || !Owns(target->Key())) return;
  c.nodes_target = nodes_target_ = target->Key();
  options_.nodes->SetTarget(*target);
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

void Reconciler::ReportApplyToNodes(const Cycle& c) {
  // Each group's Compute objects as this apply tried them: the task of each
  // action, by resource id.
  std::map<std::string, const apply::TaskResult*> tasks;
  for (const auto& task : c.applied.tasks) tasks[task.id] = &task;
  std::map<std::string, std::pair<std::string, std::string>> outcome;  // group → reason, message
  for (const auto& t : c.to_apply.targets) {
    if (t.key != c.nodes_target) continue;
    for (const auto& a : t.actions) {
      const size_t at = a.source.rfind("TPUNodeGroup/");
      auto task = tasks.find(a.resource.Id());
      if (at == std::string::npos || task == tasks.end()) continue;
      auto& o = outcome[a.source.substr(at + std::string("TPUNodeGroup/").size())];
      if (task->second->state != apply::TaskResult::State::kFailed || !o.first.empty()) continue;
      const Status& s = task->second->status;
      // The tpu-operator's reasons: an operation that ended in error, or a
      // call the API refused outright.
      const bool operation = s.message().find(": operation ") != std::string::npos;
      o = {operation ? "OperationFailed" : "RequestRejected", s.ToString()};
    }
  }
  for (const auto& [group, o] : outcome) options_.nodes->NoteApply(group, o.first, o.second);
}

}  // namespace tpu::daemon
