// Controller: watch caches → Decide per pass → Events; stockout backoff.
#include "demand/controller.h"

#include <spdlog/spdlog.h>

#include "demand/names.h"

namespace tpu::demand {
namespace {

// The pool a GKE operation acts on, when its target link names one of
// cluster `cluster`'s node pools.
std::string OperationPool(const cloud::Operation& op, const std::string& cluster) {
  std::string marker = "/clusters/" + cluster + "/nodePools/";
  auto p = op.target_link.find(marker);
  if (p == std::string::npos) return "";
  std::string rest = op.target_link.substr(p + marker.size());
  return rest.substr(0, rest.find('/'));
}

}  // namespace

Controller::Controller(kube::KubeClient& reader, kube::KubeClient& writer, kube::Clock& clock,
                       ControllerOptions options, std::function<void()> wake)
    : clock_(clock), options_(options), wake_(std::move(wake)), events_(writer, clock) {
  pods_ = std::make_unique<Informer>(
      reader, kube::resources::kPods,
      [this](const kube::WatchEvent& e, const std::map<std::string, kube::json>& o) { OnPod(e, o); },
      options_.watch_timeout_seconds);
  jobsets_ = std::make_unique<Informer>(
      reader, kube::resources::kJobSets,
      [this](const kube::WatchEvent& e, const std::map<std::string, kube::json>& o) { OnJobSet(e, o); },
      options_.watch_timeout_seconds);
}

Controller::~Controller() { Stop(); }

void Controller::Start() {
  pods_->Start();
  jobsets_->Start();
}

void Controller::RequestStop() {
  pods_->RequestStop();
  jobsets_->RequestStop();
}

void Controller::Stop() {
  RequestStop();
  pods_->Stop();
  jobsets_->Stop();
}

bool Controller::Synced() const { return pods_->synced() && jobsets_->synced(); }

void Controller::MarkDirty() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    dirty_ = true;
  }
  if (wake_) wake_();
}

void Controller::OnPod(const kube::WatchEvent& e, const std::map<std::string, kube::json>& objects) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (e.type == "RELISTED") {
      leaders_.clear();
      for (const auto& [key, obj] : objects)
        if (auto l = ParseLeader(obj)) leaders_[l->Key()] = *l;
      wake = !leaders_.empty();
    } else {
      const auto& meta = e.object.value("metadata", kube::json::object());
      std::string key = meta.value("namespace", "") + "/" + meta.value("name", "");
      auto l = e.type == "DELETED" ? std::nullopt : ParseLeader(e.object);
      if (l) {
        wake = !leaders_.count(key);  // a new waiting leader
        leaders_[key] = *l;
      } else {
        leaders_.erase(key);
      }
    }
  }
  if (wake) MarkDirty();
}

void Controller::OnJobSet(const kube::WatchEvent& e, const std::map<std::string, kube::json>& objects) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (e.type == "RELISTED") {
      jobsets_state_.clear();
      for (const auto& [key, obj] : objects) {
        JobSetState s = ParseJobSet(obj);
        jobsets_state_[s.Key()] = s;
      }
      wake = true;
    } else {
      JobSetState s = ParseJobSet(e.object);
      auto old = jobsets_state_.find(s.Key());
      if (e.type == "DELETED") {
        jobsets_state_.erase(s.Key());
        wake = true;
      } else {
        wake = old == jobsets_state_.end() || old->second.finished != s.finished;
        jobsets_state_[s.Key()] = s;
      }
    }
  }
  if (wake) MarkDirty();
}

bool Controller::TakeDirty() {
  std::lock_guard<std::mutex> lock(mu_);
  bool d = dirty_;
  dirty_ = false;
  return d;
}

std::optional<TimePoint> Controller::NextDue() const {
  std::optional<TimePoint> due;
  for (const auto& [target, d] : next_due_)
    if (d && (!due || *d < *due)) due = d;
  return due;
}

std::vector<WorkloadPool> Controller::Pools(const std::string& target_key) const {
  auto it = pools_.find(target_key);
  return it == pools_.end() ? std::vector<WorkloadPool>{} : it->second;
}

Decision Controller::Plan(const manifest::Target& target, const cloud::LiveState& live) {
  DemandInputs in;
  in.policy = target.policy.demand ? &*target.policy.demand : nullptr;
  in.now = clock_.Now();
  auto project = live.projects.find(target.project);
  if (project == live.projects.end()) return {};
  const cloud::Cluster* cluster = nullptr;
  for (const auto& c : project->second.clusters)
    if (c.name == target.cluster) cluster = &c;
  if (!cluster) return {};
  in.cluster = {target.project, cluster->location, cluster->name, cluster->release_channel};
  in.live_pools = cluster->node_pools;
  in.live_policies = project->second.workload_policies;
  for (const auto& op : project->second.running_operations)
    if (op.api == cloud::Operation::Api::kGke && !op.done())
      if (std::string pool = OperationPool(op, cluster->name); !pool.empty()) in.busy_pools.insert(pool);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, l] : leaders_) in.leaders.push_back(l);
    in.jobsets = jobsets_state_;
  }
  in.jobsets_synced = jobsets_->synced();
  in.gone_since = gone_since_[target.Key()];
  for (const auto& [id, b] : backoff_) {
    std::string prefix = "nodePool:" + in.cluster.project + "/" + in.cluster.location + "/" +
                         in.cluster.cluster + "/";
    if (id.rfind(prefix, 0) == 0) in.retry_after[id.substr(prefix.size())] = b.retry_after;
  }

  Decision d = Decide(in);
  gone_since_[target.Key()] = d.gone_since;
  next_due_[target.Key()] = d.next_due;
  pools_[target.Key()] = d.pools;

  for (const auto& r : d.refusals) {
    spdlog::info("demand: refused pod {}: {}", r.pod.Key(), r.reason);
    if (!options_.record_events) continue;
    Status s = events_.Record({"v1", "Pod", r.pod.name, r.pod.ns}, "Warning", "TPUProvisioningRefused",
                              r.reason, r.reason);
    if (s.ok()) ++events_recorded_;
    else spdlog::debug("demand: event for pod {}: {}", r.pod.Key(), s.ToString());
  }
  for (const auto& a : d.actions) {
    spdlog::info("demand: {} {}: {}", plan::ActionKindName(a.kind), a.resource.Id(), a.reason);
    if (a.kind != plan::ActionKind::kCreate || a.resource.kind != plan::ResourceKind::kNodePool) continue;
    creating_.insert(a.resource.Id());
    if (!options_.record_events) continue;
    // a.source is "Pod ns/name".
    std::string pod = a.source.substr(a.source.find(' ') + 1);
    std::string ns = pod.substr(0, pod.find('/')), name = pod.substr(pod.find('/') + 1);
    Status s = events_.Record({"v1", "Pod", name, ns}, "Normal", "TPUSliceRequested",
                              "creating node pool " + a.resource.name + " (" +
                                  std::to_string(a.blast.chips_created) + " chips, " +
                                  std::to_string(a.blast.hosts_created) + " VMs)",
                              a.resource.name);
    if (s.ok()) ++events_recorded_;
  }
  return d;
}

void Controller::AfterApply(const apply::ApplyReport& report) {
  TimePoint now = clock_.Now();
  for (const auto& t : report.tasks) {
    // Only creates count (a delete of the same pool, collecting its ERROR, has the same id).
    if (!creating_.count(t.id) || t.description.rfind("create ", 0) != 0) continue;
    if (t.state == apply::TaskResult::State::kWaitingForCapacity) {
      auto it = backoff_.find(t.id);
      std::chrono::seconds delay = it == backoff_.end()
                                       ? options_.stockout_backoff
                                       : std::min(it->second.delay * 2, options_.stockout_backoff_max);
      backoff_[t.id] = {now + delay, delay};
      spdlog::info("demand: {} waits for capacity; retry in {}s", t.id, delay.count());
    } else if (t.state == apply::TaskResult::State::kDone) {
      backoff_.erase(t.id);
      creating_.erase(t.id);
    }
  }
}

}  // namespace tpu::demand
