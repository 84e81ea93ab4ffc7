// KueuePort: what the reconcile loop asks of Kueue (docs/architecture.md, "Beside Kueue") — write the
// quota that follows a target's capacity, and ask the scale-down gate before
// deleting or shrinking pools — behind one interface, as CloudPort is for the
// cloud. KubeKueue is the real one over a kube::KubeClient (the leader-only
// client in `watch`, so a follower can never write).
//
// The target's Cluster.spec.kueue may change from one revision to the next:
// KubeKueue keeps one QuotaSync and ScaleDownGate per configuration and starts
// afresh (a new wait clock) when it changes.
//
// Thread-safety: the loop's thread only.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "kube/client.h"
#include "kube/timestamps.h"
#include "kube/events.h"
#include "kueue/bookings.h"
#include "kueue/config.h"
#include "kueue/flex_start_sync.h"
#include "kueue/quota_sync.h"
#include "kueue/scale_down.h"
#include "manifest/types.h"

namespace tpu::daemon {

class KueuePort {
 public:
  virtual ~KueuePort() = default;
  // Flavors and quota for `target` as git declares it; pools in `excluded`
  // count for nothing (held deletes and replaces).
  virtual Result<kueue::QuotaReport> Sync(const manifest::Target& target, const kueue::KueueConfig& config,
                                         const std::set<std::string>& excluded) = 0;
  // REQUIRES: `desired` is the target as it will be after the removals.
  virtual Result<kueue::ScaleDownVerdict> CheckScaleDown(const manifest::Target& desired,
                                                        const kueue::KueueConfig& config,
                                                        const std::vector<kueue::PoolRemoval>& removals) = 0;
  // Releases the hold a CheckScaleDown that said wait put on the queue, for
  // a removal given up instead of waited for.
  virtual Status ReleaseHold() { return Status::OK(); }
  // DWS flex-start objects and the queue's check for `target` (after Sync).
  virtual Result<kueue::FlexStartReport> SyncFlexStart(const manifest::Target& /*target*/,
                                                       const kueue::KueueConfig& /*config*/) {
    return kueue::FlexStartReport{};
  }
  // The cluster's DWS bookings, for /status.
  virtual Result<kueue::BookingReport> Bookings() { return kueue::BookingReport{}; }
};

class KubeKueue : public KueuePort {
 public:
  // `client` and `clock` must outlive this object.
  KubeKueue(kube::KubeClient& client, Clock& clock) : client_(client), clock_(clock) {}

  Result<kueue::QuotaReport> Sync(const manifest::Target& target, const kueue::KueueConfig& config,
                                 const std::set<std::string>& excluded) override;
  Result<kueue::ScaleDownVerdict> CheckScaleDown(const manifest::Target& desired, const kueue::KueueConfig& config,
                                                const std::vector<kueue::PoolRemoval>& removals) override;
  Status ReleaseHold() override { return gate_ ? gate_->ReleaseHold() : Status::OK(); }
  Result<kueue::FlexStartReport> SyncFlexStart(const manifest::Target& target,
                                               const kueue::KueueConfig& config) override;
  Result<kueue::BookingReport> Bookings() override { return kueue::ReadBookings(client_); }
  // Workloads from a watch (kube_threads.h), for the scale-down gate.
  void SetWorkloadSource(kueue::ScaleDownGate::WorkloadSource source) { workloads_ = std::move(source); }

 private:
  // The sync and gate for `config`, rebuilt when it differs from the last one.
  void Use(const kueue::KueueConfig& config);

  kube::KubeClient& client_;
  Clock& clock_;
  std::string config_key_;
  std::unique_ptr<kueue::QuotaSync> sync_;
  std::unique_ptr<kube::EventRecorder> events_;
  std::unique_ptr<kueue::ScaleDownGate> gate_;
  std::unique_ptr<kueue::FlexStartSync> flex_;
  kueue::ScaleDownGate::WorkloadSource workloads_;
};

// Every field of `config` that changes what is written, as one string.
std::string KueueConfigKey(const kueue::KueueConfig& config);

}  // namespace tpu::daemon
