// Refresh: list-only live state, projects in parallel on short-lived threads.
#include "cloud/refresh.h"

#include "cloud/compute_wire.h"  // SegmentAfter, LastSegment
#include "cloud/shared_reservations.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <thread>

namespace tpu::cloud {
namespace {

// A GKE node pool's current size is not on the NodePool (initialNodeCount
// keeps its create-time value); it is the targetSize of the managed instance
// groups GKE made for it, which the aggregated IGM list already holds. Takes
// those IGMs out of the list (they are GKE's, not ours) and sets each pool's
// node_count (per zone, as GKE counts) from them.
void ResolvePoolSizesFromInstanceGroups(ProjectState& state) {
  std::map<std::string, size_t> by_zone_name;  // "zone/name" → index
  for (size_t i = 0; i < state.instance_group_managers.size(); ++i) {
    const auto& m = state.instance_group_managers[i];
    by_zone_name[m.zone + "/" + m.name] = i;
  }
  std::vector<bool> gke_owned(state.instance_group_managers.size(), false);
  for (auto& cluster : state.clusters) {
    for (auto& pool : cluster.node_pools) {
      int size = -1;
      for (const auto& url : pool.instance_group_urls) {
        auto it = by_zone_name.find(SegmentAfter(url, "zones") + "/" + LastSegment(url));
        if (it == by_zone_name.end()) continue;
        gke_owned[it->second] = true;
        size = std::max(size, state.instance_group_managers[it->second].target_size);
      }
      if (size >= 0) pool.node_count = size;
    }
  }
  std::vector<InstanceGroupManager> ours;
  for (size_t i = 0; i < state.instance_group_managers.size(); ++i) {
    if (!gke_owned[i]) ours.push_back(std::move(state.instance_group_managers[i]));
  }
  state.instance_group_managers = std::move(ours);
}

// Calls `list` until it succeeds, fails for good, or has had its attempts.
template <typename F>
auto WithRetries(const RefreshOptions& options, const std::string& project, F list) -> decltype(list()) {
  // Seeded per project so jitter differs between projects refreshed together.
  std::mt19937_64 rng(std::hash<std::string>{}(project));
  for (int attempt = 0;; ++attempt) {
    auto result = list();
    if (result.ok() || !result.error().retryable() || attempt + 1 >= options.read_attempts) return result;
    options.clock->SleepFor(options.read_retry.Delay(result.error(), attempt, rng()));
  }
}

// Adds to each project the reservations of other projects it names: copied
// from an owner refreshed here, else read once from the owner.
ApiResult<bool> AddForeignReservations(ComputeClient& compute, LiveState& live,
                                       const RefreshOptions& options) {
  std::map<ReservationRef, std::optional<Reservation>> read;  // GET once per reservation
  for (auto& [project, state] : live.projects) {
    std::vector<ReservationRef> refs = ForeignReservationRefs(state);
    if (auto named = options.named_reservations.find(project); named != options.named_reservations.end())
      for (const auto& ref : named->second)
        if (std::find(refs.begin(), refs.end(), ref) == refs.end()) refs.push_back(ref);
    for (const ReservationRef& ref : refs) {
      std::optional<Reservation> found;
      if (auto owner = live.projects.find(ref.project); owner != live.projects.end()) {
        for (const auto& r : owner->second.reservations)
          if (r.project == ref.project && r.name == ref.name && r.zone == ref.zone) found = r;
      } else if (auto cached = read.find(ref); cached != read.end()) {
        found = cached->second;
      } else {
        auto got = WithRetries(options, ref.project,
                               [&] { return compute.GetReservation(ref.project, ref.zone, ref.name); });
        if (got.ok()) found = std::move(*got);
        else if (!got.error().not_found() && got.error().http_status != 403) return got.error();
        read[ref] = found;
      }
      if (found) state.reservations.push_back(std::move(*found));
    }
  }
  return true;
}

}  // namespace

ApiResult<ProjectState> RefreshProject(GkeClient& gke, ComputeClient& compute, const std::string& project,
                                       const RefreshOptions& options) {
  ProjectState state;
  state.project = project;
  auto clusters = WithRetries(options, project, [&] { return gke.ListClusters(project, "-"); });
  if (!clusters.ok()) return clusters.error();
  state.clusters = std::move(*clusters);
  if (options.include_compute) {
    auto policies = WithRetries(options, project, [&] { return compute.ListWorkloadPolicies(project); });
    if (!policies.ok()) return policies.error();
    state.workload_policies = std::move(*policies);
    auto templates = WithRetries(options, project, [&] { return compute.ListInstanceTemplates(project); });
    if (!templates.ok()) return templates.error();
    state.instance_templates = std::move(*templates);
    auto igms = WithRetries(options, project, [&] { return compute.ListInstanceGroupManagers(project); });
    if (!igms.ok()) return igms.error();
    state.instance_group_managers = std::move(*igms);
    ResolvePoolSizesFromInstanceGroups(state);
  }
  if (options.include_reservations) {
    auto reservations = WithRetries(options, project, [&] { return compute.ListReservations(project); });
    if (!reservations.ok()) return reservations.error();
    state.reservations = std::move(*reservations);
  }
  if (options.include_operations) {
    auto gke_ops = WithRetries(options, project, [&] { return gke.ListOperations(project, "-"); });
    if (!gke_ops.ok()) return gke_ops.error();
    for (auto& op : *gke_ops) {
      if (!op.done()) state.running_operations.push_back(std::move(op));
    }
    if (options.include_compute) {
      auto compute_ops = WithRetries(options, project, [&] {
        return compute.ListOperations(project, /*only_running=*/true);
      });
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
  if (options.include_reservations) {
    auto added = AddForeignReservations(compute, live, options);
    if (!added.ok()) return added.status().WithContext("refresh shared reservations");
  }
  return live;
}

}  // namespace tpu::cloud
