// Steps per action and resource kind (see action_steps.h).
#include "apply/action_steps.h"

namespace tpu::apply {
namespace {

using cloud::ApiError;
using cloud::ApiResult;
using cloud::Operation;
using plan::ActionKind;
using plan::ResourceKind;

bool NotFound(const ApiError& e) { return e.not_found(); }

cloud::NodePoolRef PoolRef(const plan::ResourceRef& r) {
  return {{r.project, r.location, r.cluster}, r.name};
}

bool Owned(const cloud::NodePool& pool) {
  if (!pool.resource_labels) return false;
  auto it = pool.resource_labels->find(cloud::kManagedLabel);
  return it != pool.resource_labels->end() && it->second == "true";
}

Step DeletePool(const plan::ResourceRef& r, Clients c) {
  Step s;
  s.what = "delete node pool " + r.project + "/" + r.location + "/" + r.cluster + "/" + r.name;
  auto ref = PoolRef(r);
  s.call = [c, ref] { return c.gke->DeleteNodePool(ref); };
  s.done_despite = NotFound;
  return s;
}

Step CreatePool(const plan::ResourceRef& r, const cloud::NodePool& pool, Clients c,
                const std::vector<cloud::NodePool>& fallbacks = {}) {
  Step s;
  s.what = "create node pool " + r.project + "/" + r.location + "/" + r.cluster + "/" + pool.name;
  cloud::ClusterRef cluster{r.project, r.location, r.cluster};
  s.call = [c, cluster, pool] { return c.gke->CreateNodePool(cluster, pool); };
  // 409 after an interrupted run: the pool is ours if it carries our marker.
  auto ref = PoolRef(r);
  ref.node_pool = pool.name;
  s.done_despite = [c, ref](const ApiError& e) {
    if (!e.already_exists()) return false;
    auto live = c.gke->GetNodePool(ref);
    return live.ok() && Owned(*live);
  };
  // A stockout leaves the pool in ERROR: delete it so the retry can create it again.
  plan::ResourceRef created = r;
  created.name = pool.name;
  s.on_stockout.push_back(DeletePool(created, c));
  // A capacity ladder: then the next rung, with the rest behind it.
  if (!fallbacks.empty())
    s.fallback.push_back(CreatePool(r, fallbacks.front(), c, {fallbacks.begin() + 1, fallbacks.end()}));
  return s;
}

Step PoolCall(const std::string& what, const cloud::NodePoolRef& ref,
              std::function<ApiResult<Operation>()> call) {
  Step s;
  s.what = what + " " + ref.cluster.project + "/" + ref.cluster.location + "/" +
           ref.cluster.cluster + "/" + ref.node_pool;
  s.call = std::move(call);
  return s;
}

Result<std::vector<Step>> PoolSteps(const plan::Action& a, const plan::TargetPlan& t, Clients c) {
  const plan::ResourceRef& r = a.resource;
  auto ref = PoolRef(r);
  bool needs_body = a.kind != ActionKind::kDelete;
  if (needs_body && !a.node_pool)
    return Status::Internal("plan action for " + r.Id() + " has no node pool body");
  switch (a.kind) {
    case ActionKind::kNoop: return std::vector<Step>{};
    case ActionKind::kCreate: return std::vector<Step>{CreatePool(r, *a.node_pool, c, a.fallbacks)};
    case ActionKind::kDelete: return std::vector<Step>{DeletePool(r, c)};
    case ActionKind::kReplace: {
      if ((t.replace_strategy == manifest::ReplaceStrategy::kCreateBeforeDelete || a.ladder_move) &&
          a.node_pool->name != r.name) {
        // The plan chose a new name for the replacement, so both can exist at
        // once; a stockout of the create drops the delete.
        return std::vector<Step>{CreatePool(r, *a.node_pool, c), DeletePool(r, c)};
      }
      return std::vector<Step>{DeletePool(r, c), CreatePool(r, *a.node_pool, c, a.fallbacks)};
    }
    case ActionKind::kResize:
    case ActionKind::kUpdate: {
      std::vector<Step> steps;
      const cloud::NodePool& want = *a.node_pool;
      std::vector<plan::UpdateCall> calls = a.update_calls;
      if (calls.empty() && a.kind == ActionKind::kResize) calls.push_back(plan::UpdateCall::kSetSize);
      for (plan::UpdateCall call : calls) {
        switch (call) {
          case plan::UpdateCall::kUpdateNodePool: {
            cloud::NodePoolUpdate u;
            u.labels = want.labels;
            u.taints = want.taints;
            u.resource_labels = want.resource_labels;
            u.tags = want.tags;
            u.node_version = want.version;
            u.image_type = want.image_type;
            u.disk_size_gb = want.disk_size_gb;
            u.disk_type = want.disk_type;
            steps.push_back(PoolCall("update node pool", ref,
                                     [c, ref, u] { return c.gke->UpdateNodePool(ref, u); }));
            break;
          }
          case plan::UpdateCall::kUpdateLocations: {
            // Alone: the proto warns that other fields sent with `locations`
            // reach only the nodes it creates.
            cloud::NodePoolUpdate u;
            u.locations = want.locations;
            steps.push_back(PoolCall("move the zones of node pool", ref,
                                     [c, ref, u] { return c.gke->UpdateNodePool(ref, u); }));
            break;
          }
          case plan::UpdateCall::kSetAutoscaling: {
            cloud::NodePoolAutoscaling as = want.autoscaling.value_or(cloud::NodePoolAutoscaling{});
            steps.push_back(PoolCall("set autoscaling of", ref, [c, ref, as] {
              return c.gke->SetNodePoolAutoscaling(ref, as);
            }));
            break;
          }
          case plan::UpdateCall::kSetManagement: {
            cloud::NodeManagement m = want.management.value_or(cloud::NodeManagement{});
            steps.push_back(PoolCall("set management of", ref,
                                     [c, ref, m] { return c.gke->SetNodePoolManagement(ref, m); }));
            break;
          }
          case plan::UpdateCall::kSetSize: {
            int n = want.node_count;
            steps.push_back(PoolCall("resize node pool", ref,
                                     [c, ref, n] { return c.gke->SetNodePoolSize(ref, n); }));
            break;
          }
          default:
            return Status::Internal(std::string("update call ") + plan::UpdateCallName(call) +
                                    " does not apply to node pools");
        }
      }
      return steps;
    }
  }
  return Status::Internal("unknown action kind");
}

Step ComputeStep(std::string what, std::function<ApiResult<Operation>()> call, bool is_delete) {
  Step s;
  s.what = std::move(what);
  s.call = std::move(call);
  if (is_delete) s.done_despite = NotFound;
  return s;
}

Result<std::vector<Step>> ComputeSteps(const plan::Action& a, Clients c) {
  const plan::ResourceRef& r = a.resource;
  std::string p = r.project;
  std::optional<Step> insert, remove, resize;
  switch (r.kind) {
    case ResourceKind::kWorkloadPolicy: {
      std::string region = r.location, name = r.name;
      remove = ComputeStep("delete workload policy " + p + "/" + region + "/" + name,
                           [c, p, region, name] { return c.compute->DeleteWorkloadPolicy(p, region, name); },
                           true);
      if (a.workload_policy) {
        cloud::WorkloadPolicy w = *a.workload_policy;
        insert = ComputeStep("create workload policy " + p + "/" + w.region + "/" + w.name,
                             [c, p, w] { return c.compute->InsertWorkloadPolicy(p, w); }, false);
      }
      break;
    }
    case ResourceKind::kInstanceTemplate: {
      std::string name = r.name;
      remove = ComputeStep("delete instance template " + p + "/" + name,
                           [c, p, name] { return c.compute->DeleteInstanceTemplate(p, name); }, true);
      if (a.instance_template) {
        cloud::InstanceTemplate t = *a.instance_template;
        insert = ComputeStep("create instance template " + p + "/" + t.name,
                             [c, p, t] { return c.compute->InsertInstanceTemplate(p, t); }, false);
      }
      break;
    }
    case ResourceKind::kInstanceGroupManager: {
      std::string zone = r.location, name = r.name;
      remove = ComputeStep("delete instance group " + p + "/" + zone + "/" + name,
                           [c, p, zone, name] { return c.compute->DeleteInstanceGroupManager(p, zone, name); },
                           true);
      if (a.instance_group_manager) {
        cloud::InstanceGroupManager m = *a.instance_group_manager;
        insert = ComputeStep("create instance group " + p + "/" + m.zone + "/" + m.name,
                             [c, p, m] { return c.compute->InsertInstanceGroupManager(p, m); }, false);
        int size = m.target_size;
        resize = ComputeStep("resize instance group " + p + "/" + zone + "/" + name,
                             [c, p, zone, name, size] {
                               return c.compute->ResizeInstanceGroupManager(p, zone, name, size);
                             },
                             false);
      }
      break;
    }
    case ResourceKind::kNodePool:
      break;
  }
  switch (a.kind) {
    case ActionKind::kNoop: return std::vector<Step>{};
    case ActionKind::kCreate:
      if (!insert) break;
      return std::vector<Step>{*insert};
    case ActionKind::kDelete: return std::vector<Step>{*remove};
    case ActionKind::kReplace:
      if (!insert) break;
      return std::vector<Step>{*remove, *insert};
    case ActionKind::kResize:
    case ActionKind::kUpdate:
      for (plan::UpdateCall call : a.update_calls)
        if (call != plan::UpdateCall::kResizeGroup)
          return Status::Internal(std::string("update call ") + plan::UpdateCallName(call) +
                                  " is not supported for " + r.Id() +
                                  " (instance templates are immutable: plan a replace)");
      if (!resize) break;
      return std::vector<Step>{*resize};
  }
  return Status::Internal("plan action " + std::string(plan::ActionKindName(a.kind)) + " for " +
                          r.Id() + " has no resource body");
}

}  // namespace

Result<std::vector<Step>> StepsFor(const plan::Action& action, const plan::TargetPlan& target,
                                   const Clients& clients) {
  if (action.resource.kind == ResourceKind::kNodePool) return PoolSteps(action, target, clients);
  return ComputeSteps(action, clients);
}

Step AwaitExisting(const cloud::Operation& op) {
  Step s;
  s.what = "wait for " + op.operation_type + " " + op.name + " started earlier";
  s.call = [op] { return ApiResult<Operation>(op); };
  s.tolerate_failed_operation = true;
  s.learn_timing = false;  // started earlier: its age is unknown
  return s;
}

}  // namespace tpu::apply
