// ShardKeeper: this replica's share of the shards, kept in Kubernetes Leases
// (docs/scaling.md). Each shard has one coordination.k8s.io/v1 Lease; its
// holder, and only its holder, reconciles the shard's targets. Each live
// replica keeps a membership Lease renewed, so every replica can count the live
// ones and take at most its fair share, ceil(shards / live replicas).
//
// The rules are client-go's leader election, per Lease: a holder's Lease
// counts as expired only when its record has not changed for
// leaseDurationSeconds by *our* clock since we first saw it (so clock skew
// cannot steal a live Lease); every write carries the resourceVersion we read
// (so two replicas cannot both take a shard); and a holder stops acting on a
// shard when it has not renewed it for renew_deadline, which is shorter than
// the lease duration, so it has stopped before anyone may take over.
//
// The caller drives it: Tick() every retry period from one thread. Holds() and
// OwnsTarget() may be called from any thread (the apply checks them before
// every mutating call).
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "base/clock.h"
#include "kube/client.h"

namespace tpu::shard {

struct ShardConfig {
  std::string ns = "default";
  std::string base = "tpu-provisioner";  // Lease names: <base>-shard-<i>, <base>-member-<identity>
  std::string identity;                  // unique per replica: the pod name
  int shards = 16;
  std::chrono::seconds lease_duration{15};
  std::chrono::seconds renew_deadline{10};  // < lease_duration
  // Rounds a new replica only announces itself before it takes shards, so
  // replicas started together see each other first instead of the first one
  // taking every shard and giving most of them back a round later.
  int join_rounds = 1;
};

struct ShardSnapshot {
  std::vector<int> held;  // sorted
  int live_replicas = 0;  // as last counted, this one included
  int fair_share = 0;
  uint64_t acquired = 0;   // shards taken, free or from an expired holder
  uint64_t takeovers = 0;  // of them, from another replica whose Lease expired
  uint64_t released = 0;   // given back over the fair share, or at shutdown
  uint64_t lost = 0;       // found taken by another, or a renew conflicted
  uint64_t errors = 0;     // failed Tick()s
  std::string last_error;
};

class ShardKeeper {
 public:
  // `client` and `clock` must outlive the keeper.
  ShardKeeper(kube::KubeClient& client, const Clock& clock, ShardConfig config);

  // One round: read every Lease of the set (one list), renew our membership,
  // renew the shards we hold, give back any over the fair share, and take free
  // or expired shards up to it. An error leaves held shards to lapse at their
  // renew deadline.
  Status Tick();
  // Held, and renewed within renew_deadline.
  bool Holds(int shard) const;
  bool OwnsTarget(const std::string& target_key) const;
  ShardSnapshot Snapshot() const;
  // At shutdown: stop holding, then give every shard and the membership back
  // so the other replicas need not wait for them to expire.
  Status ReleaseAll();
  const ShardConfig& config() const { return config_; }

 private:
  struct Seen {
    std::string record;  // holder|renewTime as last read
    SteadyTime since;     // when that record was first read, by our clock
  };
  using Leases = std::map<std::string, kube::json>;  // by name

  Status RenewMembership(const Leases& leases);
  void Observe(const Leases& leases, SteadyTime now);
  bool Expired(const std::string& name, const kube::json& lease, SteadyTime now) const;
  // The membership Leases of live replicas.
  std::vector<const kube::json*> LiveMembers(const Leases& leases, SteadyTime now) const;
  int CountLive(const std::vector<const kube::json*>& members) const;
  Status CheckShardCount(const std::vector<const kube::json*>& members) const;
  void RenewHeld(Leases& leases, SteadyTime now);
  void ReleaseSurplus(const Leases& leases, int fair);
  void AcquireUpTo(const Leases& leases, int fair, SteadyTime now);
  Result<kube::json> Write(const std::string& name, const kube::json* current, const std::string& holder,
                           bool transition);
  int HeldCount() const;

  kube::KubeClient& client_;
  const Clock& clock_;
  const ShardConfig config_;
  std::map<std::string, Seen> seen_;  // Tick's thread only
  int rounds_ = 0;                    // Tick's thread only: successful rounds so far
  mutable std::mutex mu_;
  std::map<int, SteadyTime> held_;  // shard → when its last successful renew was sent; guarded by mu_
  ShardSnapshot counts_;           // guarded by mu_ (held filled in by Snapshot)
};

}  // namespace tpu::shard
