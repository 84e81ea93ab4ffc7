// Decide: the demand rules as one pure function (see decide.h).
#include "demand/decide.h"

#include <algorithm>

#include "demand/names.h"
#include "kube/clock.h"
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

}  // namespace

std::string DemandTargetKey(const ClusterRef& cluster) { return cluster.Key() + " (demand)"; }

Decision Decide(const DemandInputs& in) {
  Decision d;
  const ClusterRef& c = in.cluster;
  const std::string target = DemandTargetKey(c);
  const auto grace = std::chrono::seconds(in.policy ? in.policy->grace_period_seconds : 300);

  std::map<std::string, const cloud::NodePool*> live;  // every pool, by name
  for (const auto& p : in.live_pools) live[p.name] = &p;

  int chips_total = 0;
  std::map<std::string, int> chips_by_ns;
  std::vector<plan::Action> deletes, creates;

  auto delete_pool = [&](const cloud::NodePool& p, const PoolOwner& owner, const std::string& why) {
    plan::Action a;
    a.kind = plan::ActionKind::kDelete;
    a.resource = PoolRef(c, p.name);
    a.target = target;
    a.source = "JobSet " + owner.Key();
    a.reason = why;
    int chips = plan::PoolChips(p.machine_type, p.node_count);
    a.blast.chips_destroyed = chips;
    a.blast.hosts_destroyed = p.node_count;
    a.blast.multi_host = p.node_count > 1;
    deletes.push_back(std::move(a));
    // A tpu7x pool's workload policy goes after it.
    if (p.placement_policy && !p.placement_policy->policy_name.empty()) {
      for (const auto& wp : in.live_policies) {
        if (wp.name != p.placement_policy->policy_name || !IsWorkloadPolicyDescription(wp.description))
          continue;
        plan::Action w;
        w.kind = plan::ActionKind::kDelete;
        w.resource = PolicyRef(c, wp.region, wp.name);
        w.target = target;
        w.source = "JobSet " + owner.Key();
        w.reason = "its node pool " + p.name + " is deleted";
        w.depends_on = {PoolRef(c, p.name).Id()};
        deletes.push_back(std::move(w));
      }
    }
  };

  std::set<std::string> deleting;  // pools deleted now or already stopping

  // Existing demand-driven pools: keep, collect or let go.
  for (const auto& p : in.live_pools) {
    auto owner = WorkloadOwner(p);
    if (!owner) continue;
    WorkloadPool view{p.name, owner->Key(), p.status, plan::PoolChips(p.machine_type, p.node_count), "in use"};
    bool busy = in.busy_pools.count(p.name) > 0 || p.status == "STOPPING" ||
                p.status == "PROVISIONING" || p.status == "RECONCILING";
    bool leaving = false;
    if (p.status == "STOPPING") {
      view.state = "deleting";
      leaving = true;
    } else if (p.status == "ERROR" && !busy) {
      delete_pool(p, *owner, "node pool in ERROR: collect (recreated while its leader pod waits)");
      view.state = "error: deleting";
      leaving = true;
    } else if (in.jobsets_synced) {
      auto js = in.jobsets.find(owner->Key());
      bool gone = js == in.jobsets.end();
      if (gone || js->second.finished) {
        TimePoint since = in.now;
        if (!gone && js->second.finished_at != TimePoint{}) {
          since = js->second.finished_at;
        } else if (auto g = in.gone_since.find(p.name); g != in.gone_since.end()) {
          since = g->second;
        }
        d.gone_since[p.name] = since;
        std::string outcome = gone ? "deleted" : js->second.outcome;
        if (in.now - since >= grace && !busy) {
          delete_pool(p, *owner, "JobSet " + owner->Key() + " " + outcome + " (grace period " +
                                     Minutes(grace) + " over)");
          view.state = "deleting";
          leaving = true;
        } else {
          TimePoint due = since + grace;
          if (!d.next_due || due < *d.next_due) d.next_due = due;
          view.state = "grace until " + kube::FormatTime(due) + " (JobSet " + outcome + ")";
        }
      }
    }
    if (leaving) deleting.insert(p.name);
    if (!leaving) {
      chips_total += view.chips;
      chips_by_ns[owner->ns] += view.chips;
    }
    d.pools.push_back(std::move(view));
  }

  // Waiting leaders: create what is missing, within the policy.
  const manifest::DemandPolicy* policy = in.policy && in.policy->enabled ? in.policy : nullptr;

  // A leader whose Job has a pool already: it fits (nothing to do), or it is
  // replaced once nothing of the JobSet it was made for is left, or the
  // leader is told why it waits.
  auto check_existing = [&](const LeaderPod& leader, const cloud::NodePool& pool) {
    auto say = [&](const std::string& why, const char* reason, const char* type) {
      d.refusals.push_back({leader, why, reason, type});
    };
    auto owner = WorkloadOwner(pool);
    if (!owner) {
      say("node pool " + pool.name + " exists and is not a demand-driven pool (no workload labels); " +
              "it is left alone and this Job gets no pool",
          "TPUProvisioningRefused", "Warning");
      return;
    }
    if (owner->Key() != leader.JobSetKey()) {
      say("node pool " + pool.name + " belongs to JobSet " + owner->Key(), "TPUProvisioningRefused", "Warning");
      return;
    }
    if (deleting.count(pool.name)) {
      say("node pool " + pool.name + " is being deleted; it is created again once it is gone",
          "TPUProvisioningWaiting", "Normal");
      return;
    }
    // The original's pools and our older ones carry no spec: reused as they
    // are, as the original reuses pools without its hash label.
    if (owner->spec.empty()) return;
    auto slice = BuildSlice(*policy, c, leader);
    if (!slice.ok()) {
      say(slice.status().message(), "TPUProvisioningRefused", "Warning");
      return;
    }
    if (slice->spec == owner->spec) return;
    std::string change = Describe(pool) + " → " + Describe(slice->pool);
    if (!owner->jobset_uid.empty() && owner->jobset_uid != leader.jobset_uid &&
        in.live_jobset_uids.count(owner->jobset_uid)) {
      say("node pool " + pool.name + " (" + change + ") was made for an earlier JobSet " + owner->Key() +
              " (uid " + owner->jobset_uid + ") that or whose pods still exist; it is replaced once they are gone",
          "TPUProvisioningWaiting", "Warning");
      return;
    }
    if (in.busy_pools.count(pool.name) || pool.status == "PROVISIONING" || pool.status == "RECONCILING") {
      say("node pool " + pool.name + " (" + change + ") does not fit this Job and has an operation running; " +
              "it is replaced when that ends",
          "TPUProvisioningWaiting", "Normal");
      return;
    }
    delete_pool(pool, *owner, "replaced: JobSet " + leader.JobSetKey() + " now needs " + change);
    deleting.insert(pool.name);
    int chips = plan::PoolChips(pool.machine_type, pool.node_count);
    chips_total -= chips;
    chips_by_ns[owner->ns] -= chips;
    for (auto& v : d.pools)
      if (v.name == pool.name) v.state = "replacing";
    say("node pool " + pool.name + " does not fit JobSet " + leader.JobSetKey() + " (" + change +
            "): deleting it, then creating it again",
        "TPUNodePoolReplaced", "Normal");
  };
  std::set<std::string> planned;
  std::vector<LeaderPod> leaders = in.leaders;
  std::sort(leaders.begin(), leaders.end(),
            [](const LeaderPod& a, const LeaderPod& b) { return a.Key() < b.Key(); });
  for (const auto& leader : leaders) {
    if (leader.opted_out) continue;
    if (in.policy && !in.policy->enabled) {
      d.refusals.push_back({leader, "demand-driven provisioning is disabled for this cluster (Cluster spec.demand.enabled: false)"});
      continue;
    }
    if (!policy) continue;  // no spec.demand: this cluster does not provision on demand
    if (leader.Request(policy->tpu_resource) <= 0) continue;  // not a TPU pod here (the original's filter)
    auto js = in.jobsets.find(leader.JobSetKey());
    if (js != in.jobsets.end() && js->second.finished) continue;
    std::string name = PoolName(leader.jobset, leader.job_key);
    if (planned.count(name)) continue;
    // The pool this Job has: ours, or the one the GKE TPU Provisioner made.
    const cloud::NodePool* existing = live.count(name) ? live[name] : nullptr;
    if (!existing) {
      auto compat = live.find(CompatPoolName(leader.jobset, leader.job_key));
      if (compat != live.end()) {
        auto o = WorkloadOwner(*compat->second);
        if (o && o->adopted && o->Key() == leader.JobSetKey()) existing = compat->second;
      }
    }
    if (existing) {
      check_existing(leader, *existing);
      continue;
    }
    if (in.busy_pools.count(name)) continue;  // our create is still running
    if (auto r = in.retry_after.find(name); r != in.retry_after.end() && in.now < r->second) {
      if (!d.next_due || r->second < *d.next_due) d.next_due = r->second;
      d.refusals.push_back({leader, "node pool " + name + " waits for capacity after a stockout; next try at " +
                                        kube::FormatTime(r->second), "TPUProvisioningWaiting", "Normal"});
      continue;
    }
    auto slice = BuildSlice(*policy, c, leader);
    if (!slice.ok()) {
      d.refusals.push_back({leader, slice.status().message()});
      continue;
    }
    if (chips_total + slice->chips > policy->max_chips) {
      d.refusals.push_back({leader, "a " + leader.topology + " slice (" + std::to_string(slice->chips) +
                                        " chips) would bring demand-driven pools to " +
                                        std::to_string(chips_total + slice->chips) +
                                        " chips, over Cluster spec.demand.maxChips " +
                                        std::to_string(policy->max_chips)});
      continue;
    }
    int ns_max = policy->max_chips_per_namespace.value_or(policy->max_chips);
    if (chips_by_ns[leader.ns] + slice->chips > ns_max) {
      d.refusals.push_back({leader, "a " + leader.topology + " slice (" + std::to_string(slice->chips) +
                                        " chips) would bring namespace " + leader.ns + " to " +
                                        std::to_string(chips_by_ns[leader.ns] + slice->chips) +
                                        " chips, over Cluster spec.demand.maxChipsPerNamespace " +
                                        std::to_string(ns_max)});
      continue;
    }
    chips_total += slice->chips;
    chips_by_ns[leader.ns] += slice->chips;
    planned.insert(name);

    plan::Action a;
    a.kind = plan::ActionKind::kCreate;
    a.resource = PoolRef(c, name);
    a.target = target;
    a.source = "Pod " + leader.Key();
    a.reason = "JobSet " + leader.JobSetKey() + " job " + leader.job_key.substr(0, 12) +
               ": leader pod unschedulable, " + leader.accelerator + " " + leader.topology;
    a.blast.chips_created = slice->chips;
    a.blast.hosts_created = slice->hosts;
    a.blast.multi_host = slice->shape.multi_host;
    if (slice->workload_policy) {
      // The GKE TPU Provisioner's pre-created policy for this topology, when there is one.
      const std::string shared = kCompatPolicyPrefix + leader.topology;
      for (const auto& l : in.live_policies)
        if (l.name == shared && l.region == slice->workload_policy->region &&
            l.accelerator_topology == slice->workload_policy->accelerator_topology) {
          slice->pool.placement_policy->policy_name = shared;
          slice->workload_policy.reset();
          break;
        }
    }
    if (slice->workload_policy) {
      const auto& wp = *slice->workload_policy;
      bool exists = std::any_of(in.live_policies.begin(), in.live_policies.end(),
                                [&](const cloud::WorkloadPolicy& l) { return l.name == wp.name && l.region == wp.region; });
      if (!exists) {
        plan::Action w;
        w.kind = plan::ActionKind::kCreate;
        w.resource = PolicyRef(c, wp.region, wp.name);
        w.target = target;
        w.source = a.source;
        w.reason = "workload policy of node pool " + name;
        w.workload_policy = wp;
        creates.push_back(std::move(w));
      }
      a.depends_on = {PolicyRef(c, wp.region, wp.name).Id()};
    }
    a.node_pool = slice->pool;
    creates.push_back(std::move(a));
    d.pools.push_back({name, leader.JobSetKey(), "CREATING", slice->chips, "creating"});
  }

  d.actions = std::move(deletes);
  for (auto& a : creates) d.actions.push_back(std::move(a));
  d.chips_in_use = chips_total;
  return d;
}

}  // namespace tpu::demand
