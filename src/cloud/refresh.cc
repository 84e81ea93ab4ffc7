// Refresh: list-only live state, projects in parallel on short-lived threads.
#include "cloud/refresh.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

namespace tpu::cloud {

ApiResult<ProjectState> RefreshProject(GkeClient& gke, ComputeClient& compute, const std::string& project,
                                       const RefreshOptions& options) {
  ProjectState state;
  state.project = project;
  auto clusters = gke.ListClusters(project, "-");
  if (!clusters.ok()) return clusters.error();
  state.clusters = std::move(*clusters);
  if (options.include_compute) {
    auto policies = compute.ListWorkloadPolicies(project);
    if (!policies.ok()) return policies.error();
    state.workload_policies = std::move(*policies);
    auto templates = compute.ListInstanceTemplates(project);
    if (!templates.ok()) return templates.error();
    state.instance_templates = std::move(*templates);
    auto igms = compute.ListInstanceGroupManagers(project);
    if (!igms.ok()) return igms.error();
    state.instance_group_managers = std::move(*igms);
  }
  if (options.include_operations) {
    auto gke_ops = gke.ListOperations(project, "-");
    if (!gke_ops.ok()) return gke_ops.error();
    for (auto& op : *gke_ops) {
      if (!op.done()) state.running_operations.push_back(std::move(op));
    }
    if (options.include_compute) {
      auto compute_ops = compute.ListOperations(project, /*only_running=*/true);
      if (!compute_ops.ok()) return compute_ops.error();
      for (auto& op : *compute_ops) state.running_operations.push_back(std::move(op));
    }
  }
  return state;
}

Result<LiveState> Refresh(GkeClient& gke, ComputeClient& compute, const std::vector<std::string>& projects,
                          const RefreshOptions& options) {
  std::vector<std::optional<ApiResult<ProjectState>>> results(projects.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < projects.size(); i = next.fetch_add(1)) {
      results[i] = RefreshProject(gke, compute, projects[i], options);
    }
  };
  size_t threads = std::min<size_t>(std::max(options.parallelism, 1), projects.size());
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::jthread> pool;
    for (size_t t = 0; t < threads; ++t) pool.emplace_back(work);
  }  // joined here

  LiveState live;
  for (size_t i = 0; i < projects.size(); ++i) {
    auto& r = *results[i];
    if (!r.ok()) return r.status().WithContext("refresh project " + projects[i]);
    live.projects[projects[i]] = std::move(*r);
  }
  return live;
}

}  // namespace tpu::cloud
