// Controller: demand-driven pools for the one Kubernetes cluster the daemon
// watches (docs/architecture.md, "Beside Kueue"). Watches Pods and JobSets (informer.h), and on each
// reconcile pass turns them, the refreshed live state and the target's
// Cluster.spec.demand into node pool actions (decide.h) for the daemon's
// executor run. Refusals and waits become Events on the pod and its JobSet;
// each pool create and delete gets the GKE TPU Provisioner's Events on the
// JobSet (NodePoolCreationStarted, …Succeeded, …Failed, NodePoolDeletion…). What it keeps in memory is only an optimisation or a delay: when a
// JobSet was first seen gone, and the retry backoff after a stockout — a
// restart loses both and at worst waits one more grace period. In-flight
// creates are found again through the cloud's operations list.
//
// Thread-safety: the informers' threads only update the caches under mu_;
// every other method is called from one thread (the reconcile loop).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "apply/executor.h"
#include "demand/decide.h"
#include "demand/informer.h"
#include "kube/client.h"
#include "kube/timestamps.h"
#include "kube/events.h"
#include "manifest/types.h"

namespace tpu::demand {

struct ControllerOptions {
  int watch_timeout_seconds = 60;
  std::chrono::seconds stockout_backoff{30};      // first retry after a stockout
  std::chrono::seconds stockout_backoff_max{600};
  bool record_events = true;  // false under --dry-run: nothing is written to Kubernetes
};

class Controller {
 public:
  // `reader` for watches, `writer` for Events (the leader-only client in the
  // daemon), `wake` asks the reconcile loop for a pass (any thread).
  Controller(kube::KubeClient& reader, kube::KubeClient& writer, Clock& clock,
             ControllerOptions options = {}, std::function<void()> wake = nullptr);
  ~Controller();

  void Start();
  // Ends both watches at once (any thread); Stop() then only joins.
  void RequestStop();
  void Stop();
  bool Synced() const;  // pods and JobSets listed

  // The actions for `target` now (empty when it has no enabled spec.demand and
  // no demand-driven pools). Records Events for refusals and creates.
  Decision Plan(const manifest::Target& target, const cloud::LiveState& live);

  // Stockout backoff: a create that ended waiting for capacity is retried
  // after a doubling delay; one that succeeded clears it.
  void AfterApply(const apply::ApplyReport& report);

  // Whether something changed since the last call (a leader pod waits, a
  // JobSet finished or went away); clears the flag.
  bool TakeDirty();
  // The earliest time a grace period or a retry backoff ends, over the last Plan calls.
  std::optional<TimePoint> NextDue() const;
  // The demand-driven pools of the last Plan of `target_key`.
  std::vector<WorkloadPool> Pools(const std::string& target_key) const;
  int events_recorded() const { return events_recorded_; }

 private:
  void OnPod(const kube::WatchEvent& e, const std::map<std::string, kube::json>& objects);
  void OnJobSet(const kube::WatchEvent& e, const std::map<std::string, kube::json>& objects);
  void MarkDirty();

  Clock& clock_;
  ControllerOptions options_;
  std::function<void()> wake_;
  kube::EventRecorder events_;
  std::unique_ptr<Informer> pods_;
  std::unique_ptr<Informer> jobsets_;

  mutable std::mutex mu_;  // guards the caches and dirty_
  std::map<std::string, LeaderPod> leaders_;     // by "ns/name"
  std::map<std::string, std::string> pod_jobset_uids_;  // every pod's JobSet UID, by "ns/name"
  std::map<std::string, JobSetState> jobsets_state_;  // by "ns/name"
  bool dirty_ = true;

  // Loop thread only.
  std::map<std::string, std::map<std::string, TimePoint>> gone_since_;  // target → pool → time
  struct Backoff {
    TimePoint retry_after;
    std::chrono::seconds delay;
  };
  std::map<std::string, Backoff> backoff_;  // pool resource id → backoff
  std::map<std::string, std::optional<TimePoint>> next_due_;  // target → due
  std::map<std::string, std::vector<WorkloadPool>> pools_;    // target → last view
  std::set<std::string> creating_;  // resource ids of creates handed out by Plan
  // The JobSet ("ns/name") each node pool action handed out by Plan is for,
  // by resource id: AfterApply reports its outcome there.
  std::map<std::string, std::string> action_jobset_;
  void RecordOnJobSet(const std::string& jobset_key, const std::string& type, const std::string& reason,
                      const std::string& message, const std::string& key);
  int events_recorded_ = 0;
};

}  // namespace tpu::demand
