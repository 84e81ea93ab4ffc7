// Lease acquisition, renewal and release.
#include "kube/leader_election.h"

#include "kube/lease.h"
#include "kube/status_errors.h"

namespace tpu::kube {

LeaderElector::LeaderElector(KubeClient& client, Clock& clock, LeaseConfig config)
    : client_(client), clock_(clock), config_(std::move(config)) {}

json LeaderElector::LeaseFor(const json* current, bool transition) const {
  return LeaseObject(config_.ns, config_.name, config_.identity, config_.lease_duration, clock_.WallNow(), current,
                     transition);
}

Result<bool> LeaderElector::TryAcquireOrRenew() {
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = clock_.WallNow();
  auto current = client_.Get(resources::kLeases, config_.ns, config_.name);
  if (!current.ok() && !IsNotFound(current.status())) return current.status();
  if (!current.ok()) {
    auto created = client_.Create(resources::kLeases, config_.ns, LeaseFor(nullptr, true));
    if (IsAlreadyExists(created.status())) return false;  // another replica was faster
    if (!created.ok()) return created.status();
    renewed_at_ = now;
    return true;
  }
  const std::string holder = LeaseHolder(*current);
  const std::string record = LeaseRecord(*current);
  if (record != observed_record_) {
    observed_record_ = record;
    observed_at_ = now;
  }
  const bool mine = holder == config_.identity;
  if (!mine && !holder.empty()) {
    if (now < observed_at_ + LeaseDuration(*current)) {
      renewed_at_.reset();
      return false;  // held by a live replica
    }
  }
  auto updated = client_.Update(resources::kLeases, config_.ns, LeaseFor(&*current, !mine));
  if (IsConflict(updated.status())) {
    renewed_at_.reset();
    return false;  // someone wrote first; re-read next time
  }
  if (!updated.ok()) return updated.status();
  renewed_at_ = now;
  observed_record_ = LeaseRecord(*updated);
  observed_at_ = now;
  return true;
}

bool LeaderElector::IsLeader() {
  std::lock_guard<std::mutex> lock(mu_);
  return renewed_at_ && clock_.WallNow() < *renewed_at_ + config_.renew_deadline;
}

Status LeaderElector::Release() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!renewed_at_) return Status::OK();
  renewed_at_.reset();
  auto current = client_.Get(resources::kLeases, config_.ns, config_.name);
  if (!current.ok()) return IsNotFound(current.status()) ? Status::OK() : current.status();
  if (LeaseHolder(*current) != config_.identity) return Status::OK();
  json lease = *current;
  lease["spec"]["holderIdentity"] = "";
  lease["spec"]["leaseDurationSeconds"] = 1;
  auto r = client_.Update(resources::kLeases, config_.ns, lease);
  return r.ok() || IsConflict(r.status()) ? Status::OK() : r.status();
}

}  // namespace tpu::kube
