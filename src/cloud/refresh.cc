// Refresh: list-only live state, every project's lists read at once through list_fanout.h.
#include "cloud/refresh.h"

#include "cloud/compute_wire.h"  // SegmentAfter, LastSegment
#include "cloud/shared_reservations.h"

#include <algorithm>
#include <functional>
#include <map>
#include <random>

#include "cloud/list_fanout.h"

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

// Calls `list` until it succeeds, fails for good, or has had its attempts,
// sleeping each backoff: for the GETs of shared reservations after the lists,
// which the fan-out retries the same way (list_fanout.h).
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

// A list that does not page (GKE's): its one call, whose result is `out`.
template <typename T>
PagedList WholeList(std::function<Prepared<std::vector<T>>()> prepare, std::vector<T>* out, uint64_t seed) {
  PagedList list;
  list.prepare_page = [prepare = std::move(prepare), out](const std::string&) {
    std::function<ApiResult<std::string>(ApiResult<std::vector<T>>)> keep =
        [out](ApiResult<std::vector<T>> items) -> ApiResult<std::string> {
      if (!items.ok()) return items.error();
      *out = std::move(*items);
      return std::string();  // no next page
    };
    return Then<std::string>(prepare(), std::move(keep));
  };
  list.restart = [out] { out->clear(); };
  list.jitter_seed = seed;
  return list;
}

// A Compute aggregated list, whose pages append to `out`.
template <typename T>
PagedList PagedAggregatedList(std::function<Prepared<std::string>(const std::string&)> prepare_page,
                              std::vector<T>* out, uint64_t seed) {
  PagedList list;
  list.prepare_page = std::move(prepare_page);
  list.restart = [out] { out->clear(); };
  list.jitter_seed = seed;
  return list;
}

// What a project's lists are read into, before they make its ProjectState.
struct ProjectLists {
  ProjectState state;
  std::vector<Operation> gke_operations;      // done or not
  std::vector<Operation> compute_operations;  // running only
};

// The project's lists, in the order RefreshProject used to read them one by
// one, so the first to fail is the error it reported.
void AddProjectLists(GkeClient& gke, ComputeClient& compute, const std::string& project,
                     const RefreshOptions& options, ProjectLists* p, std::vector<PagedList>* lists) {
  // Seeded per project so jitter differs between projects refreshed together.
  const uint64_t seed = std::hash<std::string>{}(project);
  p->state.project = project;
  lists->push_back(WholeList<Cluster>([&gke, project] { return gke.PrepareListClusters(project, "-"); },
                                      &p->state.clusters, seed));
  if (options.include_compute) {
    lists->push_back(PagedAggregatedList<WorkloadPolicy>(
        [&compute, project, out = &p->state.workload_policies](const std::string& token) {
          return compute.PrepareWorkloadPolicyPage(project, token, out);
        },
        &p->state.workload_policies, seed));
    lists->push_back(PagedAggregatedList<InstanceTemplate>(
        [&compute, project, out = &p->state.instance_templates](const std::string& token) {
          return compute.PrepareInstanceTemplatePage(project, token, out);
        },
        &p->state.instance_templates, seed));
    lists->push_back(PagedAggregatedList<InstanceGroupManager>(
        [&compute, project, out = &p->state.instance_group_managers](const std::string& token) {
          return compute.PrepareInstanceGroupManagerPage(project, token, out);
        },
        &p->state.instance_group_managers, seed));
  }
  if (options.include_reservations) {
    lists->push_back(PagedAggregatedList<Reservation>(
        [&compute, project, out = &p->state.reservations](const std::string& token) {
          return compute.PrepareReservationPage(project, token, out);
        },
        &p->state.reservations, seed));
  }
  if (options.include_operations) {
    lists->push_back(WholeList<Operation>([&gke, project] { return gke.PrepareListOperations(project, "-"); },
                                          &p->gke_operations, seed));
    if (options.include_compute) {
      lists->push_back(PagedAggregatedList<Operation>(
          [&compute, project, out = &p->compute_operations](const std::string& token) {
            return compute.PrepareOperationPage(project, /*only_running=*/true, token, out);
          },
          &p->compute_operations, seed));
    }
  }
}

ProjectState Assemble(ProjectLists& p, const RefreshOptions& options) {
  ProjectState state = std::move(p.state);
  if (options.include_compute) ResolvePoolSizesFromInstanceGroups(state);
  for (auto& op : p.gke_operations)
    if (!op.done()) state.running_operations.push_back(std::move(op));
  for (auto& op : p.compute_operations) state.running_operations.push_back(std::move(op));
  return state;
}

struct ProjectFailure {
  size_t project = 0;  // index in the projects read
  ApiError error;
};

// Every project's state (in the order of `projects`) from all their lists
// read at once, or the first project that failed and why.
std::optional<ProjectFailure> ReadProjects(GkeClient& gke, ComputeClient& compute,
                                           const std::vector<std::string>& projects, const RefreshOptions& options,
                                           std::vector<ProjectState>* states) {
  std::vector<ProjectLists> read(projects.size());  // never resized: the lists point into it
  std::vector<PagedList> lists;
  std::vector<size_t> project_of;  // by list
  for (size_t i = 0; i < projects.size(); ++i) {
    AddProjectLists(gke, compute, projects[i], options, &read[i], &lists);
    project_of.resize(lists.size(), i);
  }
  ListFanoutOptions fanout;
  fanout.max_in_flight = options.parallelism;
  fanout.attempts = options.read_attempts;
  fanout.retry = options.read_retry;
  fanout.clock = options.clock;
  if (auto failure = ReadLists(lists, fanout)) return ProjectFailure{project_of[failure->list], std::move(failure->error)};
  states->clear();
  for (auto& p : read) states->push_back(Assemble(p, options));
  return std::nullopt;
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
  std::vector<ProjectState> states;
  if (auto failure = ReadProjects(gke, compute, {project}, options, &states)) return std::move(failure->error);
  return std::move(states.front());
}

Result<LiveState> Refresh(GkeClient& gke, ComputeClient& compute, const std::vector<std::string>& projects,
                          const RefreshOptions& options) {
  std::vector<ProjectState> states;
  if (auto failure = ReadProjects(gke, compute, projects, options, &states)) {
    return failure->error.ToStatus().WithContext("refresh project " + projects[failure->project]);
  }
  LiveState live;
  for (size_t i = 0; i < projects.size(); ++i) live.projects[projects[i]] = std::move(states[i]);
  if (options.include_reservations) {
    auto added = AddForeignReservations(compute, live, options);
    if (!added.ok()) return added.status().WithContext("refresh shared reservations");
  }
  return live;
}

}  // namespace tpu::cloud
