// Executor: plan actions → scheduler tasks in pool lanes and cluster groups,
// with earlier runs' operations awaited first.
#include "apply/executor.h"

#include <algorithm>
#include <map>
#include <set>

namespace tpu::apply {
namespace {

// "…/projects/P/locations/L/clusters/C/nodePools/N" → {P, L, C, N}; empty when
// the link is not a node pool's (or a cluster's, then N is empty).
struct GkeLink {
  std::string project, location, cluster, pool;
};
std::optional<GkeLink> ParseGkeLink(const std::string& link) {
  auto part = [&](const std::string& key) -> std::string {
    auto p = link.find("/" + key + "/");
    if (p == std::string::npos) return "";
    p += key.size() + 2;
    return link.substr(p, link.find('/', p) - p);
  };
  GkeLink g{part("projects"), part("locations"), part("clusters"), part("nodePools")};
  if (g.project.empty() || g.location.empty() || g.cluster.empty()) {
    // Zonal v1 links spell the location "zones".
    g.location = g.location.empty() ? part("zones") : g.location;
    if (g.project.empty() || g.location.empty() || g.cluster.empty()) return std::nullopt;
  }
  return g;
}

// The last path segment of a Compute self link, and its scope location.
std::string LastSegment(const std::string& link) {
  auto p = link.find_last_of('/');
  return p == std::string::npos ? link : link.substr(p + 1);
}

// An action apply cannot carry out (a plan that asks for an impossible call).
class FailedTask : public Task {
 public:
  explicit FailedTask(Status why) : why_(std::move(why)) {}
  Outcome Advance() override { return Outcome::Failed(why_); }

 private:
  Status why_;
};

}  // namespace

std::string ClusterGroupOf(const std::string& project, const std::string& location,
                           const std::string& cluster) {
  return "gke:" + project + "/" + location + "/" + cluster;
}

std::string PoolLaneOf(const std::string& project, const std::string& location,
                       const std::string& cluster, const std::string& pool) {
  return ClusterGroupOf(project, location, cluster) + "/" + pool;
}

int ApplyReport::ExitCode() const {
  if (failed > 0 || skipped > 0 || cancelled > 0) return 1;
  if (waiting_for_capacity > 0) return 3;
  return 0;
}

Executor::Executor(Clients clients, ExecuteOptions options, Scheduler::Observer observer)
    : clients_(clients),
      options_(std::move(options)),
      scheduler_({options_.parallelism, options_.threads, options_.cluster_operations}, std::move(observer)) {
  if (!options_.steps.times) options_.steps.times = std::make_shared<cloud::OperationTimes>();
  if (!options_.steps.watch) options_.steps.watch = clients_.watch;
  // A batched poll costs a share of its project's list, not a call: step
  // past an operation's expected end in fortieths rather than tenths.
  // Nor, before a kind's time is known, let the next poll grow by half.
  if (options_.steps.watch) {
    options_.steps.poll.late_step = std::min(options_.steps.poll.late_step, 0.025);
    options_.steps.poll.multiplier = std::min(options_.steps.poll.multiplier, 1.25);
  }
}

void Executor::Cancel() {
  scheduler_.Cancel();
  // Tasks waiting in the watch for their poll time hear back at once.
  if (options_.steps.watch) options_.steps.watch->AnswerAllNow();
}

std::vector<TaskResult> Executor::Snapshot() const { return scheduler_.Snapshot(); }

void Executor::AddTask(TaskSpec spec, std::vector<Step> steps, const std::string& target) {
  StepTaskOptions o = options_.steps;
  o.seed = seed_++;
  if (options_.may_mutate && !target.empty()) o.may_mutate = [f = options_.may_mutate, target] { return f(target); };
  auto task = std::make_unique<StepTask>(clients_.poller, o, std::move(steps));
  step_tasks_.push_back(task.get());
  scheduler_.Add(std::move(spec), std::move(task));
}

// Earlier runs' operations (and any other caller's), for the pools, clusters
// and Compute resources `plan` touches: one on a pool at the head of that
// pool's lane; one on a cluster (create, upgrade…) before every pool action of
// the cluster; a Compute one before the action on the same resource. Each
// counts against its cluster's operations while it runs.
std::map<std::string, std::vector<std::string>> Executor::AddAwaits(const plan::Plan& plan, int* awaited) {
  std::set<std::string> lanes, groups;
  std::map<std::string, std::string> compute_names;  // "P/name" → resource id
  for (const auto& t : plan.targets) {
    if (!t.executable()) continue;
    for (const auto& a : t.actions) {
      if (!a.changes_something()) continue;
      const plan::ResourceRef& r = a.resource;
      if (r.kind == plan::ResourceKind::kNodePool) {
        lanes.insert(PoolLaneOf(r.project, r.location, r.cluster, r.name));
        groups.insert(ClusterGroupOf(r.project, r.location, r.cluster));
      } else {
        compute_names[r.project + "/" + r.name] = r.Id();
      }
    }
  }
  std::map<std::string, std::vector<std::string>> awaits_for;  // resource id or group → await task ids
  for (const auto& op : options_.running_operations) {
    if (op.done()) continue;
    TaskSpec spec{"await:" + op.name, "", {}, "wait for " + op.name, ""};
    if (op.api == cloud::Operation::Api::kGke) {
      auto link = ParseGkeLink(op.target_link);
      if (!link) continue;
      spec.group = ClusterGroupOf(link->project, link->location, link->cluster);
      if (!groups.count(spec.group)) continue;
      if (link->pool.empty()) {
        awaits_for[spec.group].push_back(spec.id);
      } else {
        spec.lane = PoolLaneOf(link->project, link->location, link->cluster, link->pool);
        if (!lanes.count(spec.lane)) continue;
      }
    } else {
      auto it = compute_names.find(op.project + "/" + LastSegment(op.target_link));
      if (it == compute_names.end()) continue;
      awaits_for[it->second].push_back(spec.id);
    }
    AddTask(std::move(spec), {AwaitExisting(op)});
    ++*awaited;
  }
  return awaits_for;
}

void Executor::AddActions(const plan::Plan& plan,
                          std::map<std::string, std::vector<std::string>>& awaits_for) {
  std::set<std::string> plan_ids;  // resource ids this plan changes, for depends_on
  for (const auto& t : plan.targets) {
    if (!t.executable()) continue;
    for (const auto& a : t.actions)
      if (a.changes_something()) plan_ids.insert(a.resource.Id());
  }
  for (const auto& t : plan.targets) {
    if (!t.executable()) continue;
    for (const auto& a : t.actions) {
      if (!a.changes_something()) continue;
      const plan::ResourceRef& r = a.resource;
      TaskSpec spec;
      spec.id = r.Id();
      spec.description = std::string(plan::ActionKindName(a.kind)) + " " + r.Id();
      if (r.kind == plan::ResourceKind::kNodePool) {
        // One operation per pool (a replace's delete and create, in order, on
        // its lane); the cluster's pools together up to its quota.
        spec.lane = PoolLaneOf(r.project, r.location, r.cluster, r.name);
        spec.group = ClusterGroupOf(r.project, r.location, r.cluster);
        for (const auto& w : awaits_for[spec.group]) spec.after.push_back(w);
      }
      for (const auto& dep : a.depends_on)
        if (plan_ids.count(dep)) spec.after.push_back(dep);
      for (const auto& w : awaits_for[spec.id]) spec.after.push_back(w);
      auto steps = StepsFor(a, t, clients_);
      if (!steps.ok()) {
        // Still scheduled, so it shows as failed and its dependents are skipped.
        scheduler_.Add(std::move(spec), std::make_unique<FailedTask>(steps.status()));
        continue;
      }
      AddTask(std::move(spec), std::move(steps.value()), t.key);
    }
  }
}

ApplyReport Executor::Run(const plan::Plan& plan) {
  auto start = options_.steps.clock->Now();
  ApplyReport report;
  seed_ = options_.steps.seed;
  auto awaits_for = AddAwaits(plan, &report.awaited);
  AddActions(plan, awaits_for);
  report.tasks = scheduler_.Run();
  for (const auto& r : report.tasks) {
    bool await = r.id.rfind("await:", 0) == 0;
    switch (r.state) {
      case TaskResult::State::kDone: report.applied += await ? 0 : 1; break;
      case TaskResult::State::kFailed: ++report.failed; break;
      case TaskResult::State::kWaitingForCapacity: ++report.waiting_for_capacity; break;
      case TaskResult::State::kSkipped: ++report.skipped; break;
      case TaskResult::State::kCancelled: ++report.cancelled; break;
      default: break;
    }
  }
  for (const StepTask* t : step_tasks_) {
    report.retries += t->retries();
    report.throttled += t->throttled();
  }
  report.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      options_.steps.clock->Now() - start);
  return report;
}

}  // namespace tpu::apply
