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

Controller::Controller(kube::KubeClient& reader, kube::KubeClient& writer, Clock& clock,
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
    auto uid_of = [](const kube::json& pod) {
      const auto& labels = pod.value("metadata", kube::json::object()).value("labels", kube::json::object());
      return labels.is_object() ? labels.value(kJobSetUidLabel, "") : std::string();
    };
    if (e.type == "RELISTED") {
      leaders_.clear();
      pod_jobset_uids_.clear();
      for (const auto& [key, obj] : objects) {
        if (auto l = ParseLeader(obj)) leaders_[l->Key()] = *l;
        if (std::string uid = uid_of(obj); !uid.empty()) pod_jobset_uids_[key] = uid;
      }
      wake = !leaders_.empty();
    } else {
      const auto& meta = e.object.value("metadata", kube::json::object());
      std::string key = meta.value("namespace", "") + "/" + meta.value("name", "");
      std::string uid = e.type == "DELETED" ? "" : uid_of(e.object);
      if (uid.empty()) {
        wake = pod_jobset_uids_.erase(key) > 0;  // the last pod of a JobSet may free a pool to replace
      } else {
        pod_jobset_uids_[key] = uid;
      }
      auto l = e.type == "DELETED" ? std::nullopt : ParseLeader(e.object);
      if (l) {
        wake = wake || !leaders_.count(key);  // a new waiting leader
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
  in.now = clock_.WallNow();
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
    for (const auto& [key, js] : jobsets_state_)
      if (!js.uid.empty()) in.live_jobset_uids.insert(js.uid);
    for (const auto& [key, uid] : pod_jobset_uids_) in.live_jobset_uids.insert(uid);
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
    spdlog::info("demand: pod {}: {}", r.pod.Key(), r.reason);
    if (!options_.record_events) continue;
    Status s = events_.Record({"v1", "Pod", r.pod.name, r.pod.ns}, r.type, r.event_reason, r.reason, r.reason);
    if (s.ok()) ++events_recorded_;
    else spdlog::debug("demand: event for pod {}: {}", r.pod.Key(), s.ToString());
    RecordOnJobSet(r.pod.JobSetKey(), r.type, r.event_reason, r.reason, r.reason);
  }
  for (const auto& a : d.actions) {
    spdlog::info("demand: {} {}: {}", plan::ActionKindName(a.kind), a.resource.Id(), a.reason);
    if (a.resource.kind != plan::ResourceKind::kNodePool) continue;
    if (a.kind != plan::ActionKind::kCreate && a.kind != plan::ActionKind::kDelete) continue;
    // a.source is "Pod ns/name" for creates, "JobSet ns/name" for deletes.
    std::string obj = a.source.substr(a.source.find(' ') + 1);
    std::string ns = obj.substr(0, obj.find('/')), name = obj.substr(obj.find('/') + 1);
    std::string jobset;
    if (a.kind == plan::ActionKind::kCreate) {
      creating_.insert(a.resource.Id());
      std::string js_name = a.node_pool && a.node_pool->labels ? a.node_pool->labels->at(kNodeJobSetLabel) : "";
      jobset = ns + "/" + js_name;
    } else {
      jobset = obj;
    }
    action_jobset_[a.resource.Id()] = jobset;
    if (!options_.record_events) continue;
    if (a.kind == plan::ActionKind::kCreate) {
      std::string what = std::to_string(a.blast.chips_created) + " chips, " +
                         std::to_string(a.blast.hosts_created) + " VMs";
      Status s = events_.Record({"v1", "Pod", name, ns}, "Normal", "TPUSliceRequested",
                                "creating node pool " + a.resource.name + " (" + what + ")", a.resource.name);
      if (s.ok()) ++events_recorded_;
      RecordOnJobSet(jobset, "Normal", "NodePoolCreationStarted",
                     "Starting creation of Node Pool " + a.resource.name + " (" + what + ") because " + a.reason,
                     a.resource.name);
    } else {
      RecordOnJobSet(jobset, "Normal", "NodePoolDeletionStarted",
                     "Starting deletion of Node Pool " + a.resource.name + " because " + a.reason, a.resource.name);
    }
  }
  return d;
}

void Controller::RecordOnJobSet(const std::string& jobset_key, const std::string& type,
                                const std::string& reason, const std::string& message,
                                const std::string& key) {
  if (!options_.record_events) return;
  auto slash = jobset_key.find('/');
  if (slash == std::string::npos || slash + 1 == jobset_key.size()) return;
  Status s = events_.Record({"jobset.x-k8s.io/v1alpha2", "JobSet", jobset_key.substr(slash + 1),
                             jobset_key.substr(0, slash)},
                            type, reason, message, key);
  if (s.ok()) ++events_recorded_;
  else spdlog::debug("demand: event for JobSet {}: {}", jobset_key, s.ToString());
}

void Controller::AfterApply(const apply::ApplyReport& report) {
  TimePoint now = clock_.WallNow();
  // The outcome of each node pool create and delete, on its JobSet.
  for (const auto& t : report.tasks) {
    auto js = action_jobset_.find(t.id);
    if (js == action_jobset_.end()) continue;
    bool create = t.description.rfind("create ", 0) == 0;
    if (!create && t.description.rfind("delete ", 0) != 0) continue;
    std::string pool = t.id.substr(t.id.rfind('/') + 1);
    using State = apply::TaskResult::State;
    if (t.state == State::kDone) {
      RecordOnJobSet(js->second, "Normal", create ? "NodePoolCreationSucceeded" : "NodePoolDeletionSucceeded",
                     std::string("Successfully ") + (create ? "created" : "deleted") + " Node Pool " + pool + ".",
                     pool);
    } else if (t.state == State::kFailed || t.state == State::kWaitingForCapacity) {
      RecordOnJobSet(js->second, "Warning", create ? "NodePoolCreationFailed" : "NodePoolDeletionFailed",
                     std::string("Operation to ") + (create ? "create" : "delete") + " Node Pool " + pool +
                         " failed: " + t.status.message(),
                     pool);
    } else {
      continue;  // skipped or cancelled: the next pass decides again
    }
    action_jobset_.erase(js);
  }
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
