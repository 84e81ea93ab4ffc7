// The safe scale-down gate. Before the executor deletes or shrinks TPU node
// pools, it asks Check(): quota is lowered first (the pools' chips leave the
// flavor), so Kueue admits nothing new onto capacity that is going away; then
// the answer is Proceed when the flavor's admitted usage fits the lowered
// quota, or Wait while admitted workloads still need it, until the policy
// timeout. Each answer is also a Kubernetes Event on the queue, and, when the
// policy says Hold, the ClusterQueue's stopPolicy holds admission meanwhile.
//
// Deletes of flex-start pools also wait, with no timeout, while a live DWS
// booking holds them (bookings.h): its workload runs on those nodes.
//
// Keeps when each wait began (per set of pools), so one gate object must live
// across the daemon's reconcile passes. Not thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "kube/client.h"
#include "kube/timestamps.h"
#include "kube/events.h"
#include "kueue/quota_sync.h"
#include "manifest/types.h"

namespace tpu::kueue {

// The field manager of the hold, apart from the quota's, so a quota sync never
// removes a hold and releasing the hold never touches quota.
inline constexpr const char* kHoldFieldManager = "tpu-provisioner-scale-down";

struct PoolRemoval {
  std::string node_pool;    // GKE node pool about to be deleted or shrunk ("train-1")
  std::string accelerator;  // its gke-tpu-accelerator
  std::string topology;
  bool flex_start = false;  // a DWS flex-start pool: a live booking may hold it
};

enum class ScaleDownDecision { kProceed, kWait };

struct FlavorUse {
  std::string flavor;
  int64_t quota = 0;  // after lowering
  int64_t usage = 0;  // admitted, unfinished workloads
  std::vector<std::string> workloads;  // "namespace/name"
};

struct ScaleDownVerdict {
  ScaleDownDecision decision = ScaleDownDecision::kProceed;
  std::string message;  // for /status and the Event
  std::vector<FlavorUse> flavors;
  std::chrono::seconds waited{0};
  bool timed_out = false;
};

class ScaleDownGate {
 public:
  // All references must outlive the gate.
  ScaleDownGate(kube::KubeClient& client, QuotaSync& sync, kube::EventRecorder& events, Clock& clock)
      : client_(client), sync_(sync), events_(events), clock_(clock) {}

  // Workloads from a watch cache (nullopt while it has not listed): a wait is
  // decided from it, so a pass that re-asks a held scale-down reads nothing;
  // a decision to proceed is confirmed with a fresh list, since a cache may
  // not yet hold a workload admitted a moment ago.
  using WorkloadSource = std::function<std::optional<std::vector<json>>()>;
  void SetWorkloadSource(WorkloadSource source) { workloads_ = std::move(source); }

  // REQUIRES: `desired` is the target as it will be after the change.
  Result<ScaleDownVerdict> Check(const manifest::Target& desired, const std::vector<PoolRemoval>& removals);
  // Lets the queue admit again when a wait is given up rather than waited out
  // (a capacity ladder's move back up, dropped for the pass). Idempotent.
  Status ReleaseHold() { return SetHold(false); }

 private:
  // `workloads`: the Workloads to count (a cache's, or listed when null).
  Result<FlavorUse> Usage(const std::string& flavor, int64_t quota, const std::vector<json>* workloads);
  Status SetHold(bool on);
  // The Wait verdict when a live booking holds one of the flex-start pools
  // among `removals`; nullopt when none does.
  Result<std::optional<ScaleDownVerdict>> BookingHold(const std::vector<PoolRemoval>& removals,
                                                      const std::string& key);

  kube::KubeClient& client_;
  QuotaSync& sync_;
  kube::EventRecorder& events_;
  Clock& clock_;
  std::map<std::string, WallTime> waiting_since_;  // by the removal's pool names
  bool holding_ = false;
  WorkloadSource workloads_;
};

}  // namespace tpu::kueue
