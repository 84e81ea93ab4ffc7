// Decide: the demand rules as one pure function (see decide.h).
#include "demand/decide.h"

#include <algorithm>

#include "demand/names.h"
#include "kube/timestamps.h"
#include "plan/normalize.h"

namespace tpu::demand {
namespace {

plan::ResourceRef PoolRef(const ClusterRef& c, const std::string& name) {
  return {plan::ResourceKind::kNodePool, c.project, c.location, c.cluster, name};
}

plan::ResourceRef PolicyRef(const ClusterRef& c, const std::string& region, const std::string& name) {
  return {plan::ResourceKind::kWorkloadPolicy, c.project, region, "", name};
}

std::string Minutes(std::chrono::seconds s) {
  if (s.count() % 60 == 0) return std::to_string(s.count() / 60) + "m";
  return std::to_string(s.count()) + "s";
}

// "ct6e-standard-4t ×4 4x4 spot": what a pool is, for Events about replacing it.
std::string Describe(const cloud::NodePool& p) {
  std::string out = p.machine_type + " ×" + std::to_string(p.node_count);
  if (p.placement_policy && !p.placement_policy->tpu_topology.empty()) out += " " + p.placement_policy->tpu_topology;
  if (p.spot) out += " spot";
  if (p.reservation_affinity && !p.reservation_affinity->values.empty())
    out += " reservation " + p.reservation_affinity->values[0];
  return out;
}

// One Decide() call: the inputs, the decision being built, and the running
// chip counts the policy's limits are checked against.
class Decider {
 public:
  explicit Decider(const DemandInputs& in)
      : in_(in), c_(in.cluster), target_(DemandTargetKey(in.cluster)),
        grace_(in.policy ? in.policy->grace_period_seconds : 300),
        policy_(in.policy && in.policy->enabled ? in.policy : nullptr) {
    for (const auto& p : in.live_pools) live_[p.name] = &p;
  }

  Decision Run() {
    for (const auto& p : in_.live_pools) KeepCollectOrLetGo(p);
    std::vector<LeaderPod> leaders = in_.leaders;
    std::sort(leaders.begin(), leaders.end(),
              [](const LeaderPod& a, const LeaderPod& b) { return a.Key() < b.Key(); });
    for (const auto& leader : leaders) Provision(leader);
    d_.actions = std::move(deletes_);
    for (auto& a : creates_) d_.actions.push_back(std::move(a));
    d_.chips_in_use = chips_total_;
    return std::move(d_);
  }

 private:
  void DeletePool(const cloud::NodePool& p, const PoolOwner& owner, const std::string& why) {
    plan::Action a;
    a.kind = plan::ActionKind::kDelete;
    a.resource = PoolRef(c_, p.name);
    a.target = target_;
    a.source = "JobSet " + owner.Key();
    a.reason = why;
    int chips = plan::PoolChips(p.machine_type, p.node_count);
    a.blast.chips_destroyed = chips;
    a.blast.hosts_destroyed = p.node_count;
    a.blast.multi_host = p.node_count > 1;
    deletes_.push_back(std::move(a));
    // A tpu7x pool's workload policy goes after it.
    if (!p.placement_policy || p.placement_policy->policy_name.empty()) return;
    for (const auto& wp : in_.live_policies) {
      if (wp.name != p.placement_policy->policy_name || !IsWorkloadPolicyDescription(wp.description)) continue;
      plan::Action w;
      w.kind = plan::ActionKind::kDelete;
      w.resource = PolicyRef(c_, wp.region, wp.name);
      w.target = target_;
      w.source = "JobSet " + owner.Key();
      w.reason = "its node pool " + p.name + " is deleted";
      w.depends_on = {PoolRef(c_, p.name).Id()};
      deletes_.push_back(std::move(w));
    }
  }

  // An existing demand-driven pool: kept, collected after its JobSet ends
  // and the grace period is over, or let go (stopping, in error).
  void KeepCollectOrLetGo(const cloud::NodePool& p) {
    auto owner = WorkloadOwner(p);
    if (!owner) return;
    WorkloadPool view{p.name, owner->Key(), p.status, plan::PoolChips(p.machine_type, p.node_count), "in use"};
    bool busy = in_.busy_pools.count(p.name) > 0 || p.status == "STOPPING" || p.status == "PROVISIONING" ||
                p.status == "RECONCILING";
    bool leaving = false;
    if (p.status == "STOPPING") {
      view.state = "deleting";
      leaving = true;
    } else if (p.status == "ERROR" && !busy) {
      DeletePool(p, *owner, "node pool in ERROR: collect (recreated while its leader pod waits)");
      view.state = "error: deleting";
      leaving = true;
    } else if (in_.jobsets_synced) {
      leaving = CollectIfDone(p, *owner, busy, &view);
    }
    if (leaving) {
      deleting_.insert(p.name);
    } else {
      chips_total_ += view.chips;
      chips_by_ns_[owner->ns] += view.chips;
    }
    d_.pools.push_back(std::move(view));
  }

  // A pool whose JobSet is gone or finished: deleted once the grace period is
  // over (and nothing runs on it); true when it is being deleted.
  bool CollectIfDone(const cloud::NodePool& p, const PoolOwner& owner, bool busy, WorkloadPool* view) {
    auto js = in_.jobsets.find(owner.Key());
    bool gone = js == in_.jobsets.end();
    if (!gone && !js->second.finished) return false;
    TimePoint since = in_.now;
    if (!gone && js->second.finished_at != TimePoint{}) {
      since = js->second.finished_at;
    } else if (auto g = in_.gone_since.find(p.name); g != in_.gone_since.end()) {
      since = g->second;
    }
    d_.gone_since[p.name] = since;
    std::string outcome = gone ? "deleted" : js->second.outcome;
    if (in_.now - since >= grace_ && !busy) {
      DeletePool(p, owner, "JobSet " + owner.Key() + " " + outcome + " (grace period " + Minutes(grace_) + " over)");
      view->state = "deleting";
      return true;
    }
    TimePoint due = since + grace_;
    NoteDue(due);
    view->state = "grace until " + kube::FormatTime(due) + " (JobSet " + outcome + ")";
    return false;
  }

  void NoteDue(TimePoint due) {
    if (!d_.next_due || due < *d_.next_due) d_.next_due = due;
  }

  void Say(const LeaderPod& leader, const std::string& why, const char* reason, const char* type) {
    d_.refusals.push_back({leader, why, reason, type});
  }

  // A leader whose Job has a pool already: it fits (nothing to do), or it is
  // replaced once nothing of the JobSet it was made for is left, or the
  // leader is told why it waits.
  void CheckExisting(const LeaderPod& leader, const cloud::NodePool& pool) {
    auto owner = WorkloadOwner(pool);
    if (!owner) {
      Say(leader, "node pool " + pool.name + " exists and is not a demand-driven pool (no workload labels); " +
                      "it is left alone and this Job gets no pool",
          "TPUProvisioningRefused", "Warning");
      return;
    }
    if (owner->Key() != leader.JobSetKey()) {
      Say(leader, "node pool " + pool.name + " belongs to JobSet " + owner->Key(), "TPUProvisioningRefused", "Warning");
      return;
    }
    if (deleting_.count(pool.name)) {
      Say(leader, "node pool " + pool.name + " is being deleted; it is created again once it is gone",
          "TPUProvisioningWaiting", "Normal");
      return;
    }
    // The original's pools and our older ones carry no spec: reused as they
    // are, as the original reuses pools without its hash label.
    if (owner->spec.empty()) return;
    auto slice = BuildSlice(*policy_, c_, leader);
    if (!slice.ok()) {
      Say(leader, slice.status().message(), "TPUProvisioningRefused", "Warning");
      return;
    }
    if (slice->spec == owner->spec) return;
    ReplaceIfFree(leader, pool, *owner, Describe(pool) + " → " + Describe(slice->pool));
  }

  // A pool that no longer fits its Job: replaced, unless an earlier JobSet or
  // a running operation still holds it.
  void ReplaceIfFree(const LeaderPod& leader, const cloud::NodePool& pool, const PoolOwner& owner,
                     const std::string& change) {
    if (!owner.jobset_uid.empty() && owner.jobset_uid != leader.jobset_uid &&
        in_.live_jobset_uids.count(owner.jobset_uid)) {
      Say(leader, "node pool " + pool.name + " (" + change + ") was made for an earlier JobSet " + owner.Key() +
                      " (uid " + owner.jobset_uid + ") that or whose pods still exist; it is replaced once they are gone",
          "TPUProvisioningWaiting", "Warning");
      return;
    }
    if (in_.busy_pools.count(pool.name) || pool.status == "PROVISIONING" || pool.status == "RECONCILING") {
      Say(leader, "node pool " + pool.name + " (" + change + ") does not fit this Job and has an operation running; " +
                      "it is replaced when that ends",
          "TPUProvisioningWaiting", "Normal");
      return;
    }
    DeletePool(pool, owner, "replaced: JobSet " + leader.JobSetKey() + " now needs " + change);
    deleting_.insert(pool.name);
    int chips = plan::PoolChips(pool.machine_type, pool.node_count);
    chips_total_ -= chips;
    chips_by_ns_[owner.ns] -= chips;
    for (auto& v : d_.pools)
      if (v.name == pool.name) v.state = "replacing";
    Say(leader, "node pool " + pool.name + " does not fit JobSet " + leader.JobSetKey() + " (" + change +
                    "): deleting it, then creating it again",
        "TPUNodePoolReplaced", "Normal");
  }

  // The pool this Job has: ours, or the one the GKE TPU Provisioner made.
  const cloud::NodePool* ExistingPool(const LeaderPod& leader, const std::string& name) const {
    if (auto it = live_.find(name); it != live_.end()) return it->second;
    auto compat = live_.find(CompatPoolName(leader.jobset, leader.job_key));
    if (compat == live_.end()) return nullptr;
    auto o = WorkloadOwner(*compat->second);
    return o && o->adopted && o->Key() == leader.JobSetKey() ? compat->second : nullptr;
  }

  // A waiting leader: create what is missing, within the policy.
  void Provision(const LeaderPod& leader) {
    if (leader.opted_out) return;
    if (in_.policy && !in_.policy->enabled) {
      d_.refusals.push_back(
          {leader, "demand-driven provisioning is disabled for this cluster (Cluster spec.demand.enabled: false)"});
      return;
    }
    if (!policy_) return;  // no spec.demand: this cluster does not provision on demand
    if (leader.Request(policy_->tpu_resource) <= 0) return;  // not a TPU pod here (the original's filter)
    auto js = in_.jobsets.find(leader.JobSetKey());
    if (js != in_.jobsets.end() && js->second.finished) return;
    std::string name = PoolName(leader.jobset, leader.job_key);
    if (planned_.count(name)) return;
    if (const cloud::NodePool* existing = ExistingPool(leader, name)) {
      CheckExisting(leader, *existing);
      return;
    }
    if (in_.busy_pools.count(name)) return;  // our create is still running
    if (auto r = in_.retry_after.find(name); r != in_.retry_after.end() && in_.now < r->second) {
      NoteDue(r->second);
      Say(leader, "node pool " + name + " waits for capacity after a stockout; next try at " + kube::FormatTime(r->second),
          "TPUProvisioningWaiting", "Normal");
      return;
    }
    auto slice = BuildSlice(*policy_, c_, leader);
    if (!slice.ok()) {
      d_.refusals.push_back({leader, slice.status().message()});
      return;
    }
    if (!WithinLimits(leader, slice->chips)) return;
    chips_total_ += slice->chips;
    chips_by_ns_[leader.ns] += slice->chips;
    planned_.insert(name);
    Create(leader, name, std::move(slice.value()));
  }

  // Cluster spec.demand.maxChips and maxChipsPerNamespace; a refusal when over.
  bool WithinLimits(const LeaderPod& leader, int chips) {
    const std::string slice = "a " + leader.topology + " slice (" + std::to_string(chips) + " chips)";
    if (chips_total_ + chips > policy_->max_chips) {
      d_.refusals.push_back({leader, slice + " would bring demand-driven pools to " +
                                         std::to_string(chips_total_ + chips) +
                                         " chips, over Cluster spec.demand.maxChips " +
                                         std::to_string(policy_->max_chips)});
      return false;
    }
    int ns_max = policy_->max_chips_per_namespace.value_or(policy_->max_chips);
    if (chips_by_ns_[leader.ns] + chips > ns_max) {
      d_.refusals.push_back({leader, slice + " would bring namespace " + leader.ns + " to " +
                                         std::to_string(chips_by_ns_[leader.ns] + chips) +
                                         " chips, over Cluster spec.demand.maxChipsPerNamespace " +
                                         std::to_string(ns_max)});
      return false;
    }
    return true;
  }

  void Create(const LeaderPod& leader, const std::string& name, SliceRequest slice) {
    plan::Action a;
    a.kind = plan::ActionKind::kCreate;
    a.resource = PoolRef(c_, name);
    a.target = target_;
    a.source = "Pod " + leader.Key();
    a.reason = "JobSet " + leader.JobSetKey() + " job " + leader.job_key.substr(0, 12) +
               ": leader pod unschedulable, " + leader.accelerator + " " + leader.topology;
    a.blast.chips_created = slice.chips;
    a.blast.hosts_created = slice.hosts;
    a.blast.multi_host = slice.shape.multi_host;
    if (slice.workload_policy) {
      // The GKE TPU Provisioner's pre-created policy for this topology, when there is one.
      const std::string shared = kCompatPolicyPrefix + leader.topology;
      for (const auto& l : in_.live_policies)
        if (l.name == shared && l.region == slice.workload_policy->region &&
            l.accelerator_topology == slice.workload_policy->accelerator_topology) {
          slice.pool.placement_policy->policy_name = shared;
          slice.workload_policy.reset();
          break;
        }
    }
    if (slice.workload_policy) {
      const auto& wp = *slice.workload_policy;
      bool exists = std::any_of(in_.live_policies.begin(), in_.live_policies.end(),
                                [&](const cloud::WorkloadPolicy& l) { return l.name == wp.name && l.region == wp.region; });
      if (!exists) {
        plan::Action w;
        w.kind = plan::ActionKind::kCreate;
        w.resource = PolicyRef(c_, wp.region, wp.name);
        w.target = target_;
        w.source = a.source;
        w.reason = "workload policy of node pool " + name;
        w.workload_policy = wp;
        creates_.push_back(std::move(w));
      }
      a.depends_on = {PolicyRef(c_, wp.region, wp.name).Id()};
    }
    a.node_pool = slice.pool;
    creates_.push_back(std::move(a));
    d_.pools.push_back({name, leader.JobSetKey(), "CREATING", slice.chips, "creating"});
  }

  const DemandInputs& in_;
  const ClusterRef& c_;
  const std::string target_;
  const std::chrono::seconds grace_;
  const manifest::DemandPolicy* policy_;  // null unless spec.demand is there and enabled
  std::map<std::string, const cloud::NodePool*> live_;  // every pool, by name
  Decision d_;
  int chips_total_ = 0;
  std::map<std::string, int> chips_by_ns_;
  std::vector<plan::Action> deletes_, creates_;
  std::set<std::string> deleting_;  // pools deleted now or already stopping
  std::set<std::string> planned_;   // pools created by this decision
};

}  // namespace

std::string DemandTargetKey(const ClusterRef& cluster) { return cluster.Key() + " (demand)"; }

Decision Decide(const DemandInputs& in) { return Decider(in).Run(); }

}  // namespace tpu::demand
