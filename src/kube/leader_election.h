// Leader election with a coordination.k8s.io/v1 Lease, so several replicas
// (say, one sidecar per Kueue replica) act as one. Follows client-go's rules:
// a holder's lease counts as expired only when the record has not changed for
// leaseDurationSeconds as measured by *our* clock since we first saw it, so
// clock skew between replicas cannot steal a live lease; writes use the read
// resourceVersion, so two candidates cannot both win.
//
// The caller drives it: TryAcquireOrRenew() every retry period (a few
// seconds) from one thread; IsLeader() may be read from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include "kube/client.h"
#include "kube/timestamps.h"

namespace tpu::kube {

struct LeaseConfig {
  std::string ns = "kueue-system";
  std::string name = "tpu-provisioner";
  std::string identity;  // unique per replica: the pod name
  std::chrono::seconds lease_duration{15};
  // A leader that has not renewed for this long stops acting, before anyone
  // else may take over (renew_deadline < lease_duration).
  std::chrono::seconds renew_deadline{10};
};

class LeaderElector {
 public:
  LeaderElector(KubeClient& client, Clock& clock, LeaseConfig config);

  // One attempt; true when this replica holds the lease afterwards.
  Result<bool> TryAcquireOrRenew();
  // Held, and renewed within renew_deadline by our clock.
  bool IsLeader();
  // Gives the lease up at shutdown so the next replica need not wait it out.
  Status Release();
  const LeaseConfig& config() const { return config_; }

 private:
  json LeaseFor(const json* current, bool transition) const;

  KubeClient& client_;
  Clock& clock_;
  LeaseConfig config_;
  std::mutex mu_;
  std::optional<WallTime> renewed_at_;  // our last successful renew
  std::string observed_record_;                 // holder+renewTime as last seen
  WallTime observed_at_{};
};

}  // namespace tpu::kube
