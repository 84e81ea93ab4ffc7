// Plan rules over whole targets: create, noop, delete, slices, ownership and
// adopt, guards (prevent-destroy, maxDeletePercent, vanished targets), blocked
// and suspended targets, prune: false, repair, cluster location, TPUNodeGroup
// dependencies and template replacement.
#include "plan/planner.h"

#include <gtest/gtest.h>

#include "plan/fingerprint.h"
#include "plan/ownership.h"
#include "plan/plan_test_util.h"

namespace tpu::plan {
namespace {

using testing::AsReported;
using testing::InSync;
using testing::MakeCluster;
using testing::MakePool;
using testing::MakeTarget;
using testing::RepoOf;

// "kind name" of every action, in plan order, noops left out.
std::vector<std::string> Steps(const TargetPlan& t) {
  std::vector<std::string> out;
  for (const auto& a : t.actions)
    if (a.kind != ActionKind::kNoop) out.push_back(std::string(ActionKindName(a.kind)) + " " + a.resource.name);
  return out;
}

const Action* Find(const TargetPlan& t, const std::string& name) {
  for (const auto& a : t.actions)
    if (a.resource.name == name) return &a;
  return nullptr;
}

cloud::Cluster& ClusterOf(cloud::LiveState& live, const std::string& project = "p") {
  return live.projects[project].clusters.at(0);
}

TEST(PlannerTest, CreatesEverySliceInAnEmptyCluster) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("train", "v5p", "2x2x4", 2));
  cloud::LiveState live;
  live.projects["p"].clusters.push_back(MakeCluster());
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  ASSERT_EQ(plan.targets.size(), 1u);
  const TargetPlan& tp = plan.targets[0];
  EXPECT_EQ(tp.status, TargetStatus::kPlanned);
  EXPECT_EQ(tp.location, "us-central2");
  EXPECT_EQ(Steps(tp), (std::vector<std::string>{"create train-0", "create train-1"}));
  EXPECT_EQ(tp.actions[0].blast, (BlastRadius{16, 0, 4, 0, true, false}));
  EXPECT_EQ(tp.actions[0].resource.Id(), "nodePool:p/us-central2/c/train-0");
  EXPECT_EQ(tp.actions[0].source, "deploy/p/c/pools.yaml:1:1 TPUNodePool/train");
  ASSERT_TRUE(tp.actions[0].node_pool);
  Summary s = plan.Summarize();
  EXPECT_EQ(s.create, 2);
  EXPECT_EQ(s.chips_created, 32);
  EXPECT_TRUE(plan.HasChanges());
  EXPECT_FALSE(plan.HasErrors());
}

TEST(PlannerTest, InSyncIsAllNoop) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("train", "v5p", "2x2x4", 2));
  t.pools.push_back(MakePool("big", "v7x", "4x4x4"));
  t.pools.push_back(MakePool("serve", "v6e", "2x2", 3));
  Plan plan = ComputePlan(RepoOf({t}), InSync(t), {});
  EXPECT_FALSE(plan.HasChanges()) << Steps(plan.targets[0]).front();
  EXPECT_FALSE(plan.HasErrors());
  EXPECT_EQ(plan.Summarize().noop, 7) << "6 pools and one workload policy";
}

TEST(PlannerTest, Tpu7xPolicyIsCreatedFirstAndPoolsDependOnIt) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("big", "v7x", "4x4x4", 2));
  cloud::LiveState live;
  live.projects["p"].clusters.push_back(MakeCluster());
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  EXPECT_EQ(Steps(tp), (std::vector<std::string>{"create big-wp", "create big-0", "create big-1"}));
  EXPECT_EQ(tp.actions[1].depends_on, std::vector<std::string>{"workloadPolicy:p/us-central2/big-wp"});
  ASSERT_TRUE(tp.actions[0].workload_policy);
}

TEST(PlannerTest, ExistingUnmanagedPolicyIsUsedAsItIs) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("big", "v7x", "4x4x4"));
  cloud::LiveState live;
  live.projects["p"].clusters.push_back(MakeCluster());
  live.projects["p"].workload_policies.push_back({"big-wp", "us-central2", "HIGH_THROUGHPUT", "4x4x4", "", "READY", "", ""});
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  EXPECT_EQ(Steps(tp), (std::vector<std::string>{"create big-0"}));
  EXPECT_TRUE(tp.actions.back().depends_on.empty());
}

TEST(PlannerTest, UnmanagedPoolWithWantedNameIsAConflict) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("serve", "v6e", "2x2"));
  manifest::Target other = MakeTarget("p", "d");
  other.pools.push_back(MakePool("ok", "v6e", "2x2"));
  cloud::LiveState live = InSync(t);
  cloud::NodePool& pool = ClusterOf(live).node_pools[0];
  pool.resource_labels = cloud::StringMap{};
  live.projects["p"].clusters.push_back(MakeCluster("p", "d"));
  Plan plan = ComputePlan(RepoOf({t, other}), live, {});
  ASSERT_EQ(plan.targets.size(), 2u);
  const TargetPlan& c = plan.targets[0];
  EXPECT_EQ(c.status, TargetStatus::kBlocked);
  EXPECT_TRUE(c.actions.empty());
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_EQ(c.errors[0],
            "deploy/p/c/pools.yaml:1:1 TPUNodePool/serve: node pool serve-0 in cluster c already exists and is "
            "not managed by tpu-provisioner for this target; add the annotation tpu-provisioner.io/adopt: "
            "\"true\" to manage it, or choose another name");
  EXPECT_EQ(plan.targets[1].status, TargetStatus::kPlanned);
  EXPECT_EQ(Steps(plan.targets[1]), (std::vector<std::string>{"create ok-0"}));
  EXPECT_TRUE(plan.HasErrors());
  EXPECT_TRUE(plan.HasChanges());
}

TEST(PlannerTest, PoolMarkedForAnotherTargetIsAConflict) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("serve", "v6e", "2x2"));
  cloud::LiveState live = InSync(t);
  (*ClusterOf(live).node_pools[0].resource_labels)[cloud::kTargetHashLabel] = TargetHash("p/elsewhere");
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  EXPECT_EQ(plan.targets[0].status, TargetStatus::kBlocked);
}

TEST(PlannerTest, AdoptAddsTheMarkers) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("serve", "v6e", "2x2"));
  t.pools[0].annotations.adopt = true;
  cloud::LiveState live = InSync(t);
  ClusterOf(live).node_pools[0].resource_labels = cloud::StringMap{{"goog-x", "y"}};
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  ASSERT_EQ(Steps(tp), (std::vector<std::string>{"update serve-0"}));
  EXPECT_EQ(tp.actions[0].reason, "adopt: matches its manifest (unmanaged pool); only the ownership labels are written");
  EXPECT_TRUE(tp.actions[0].adopt_only);
  EXPECT_EQ(tp.actions[0].node_pool->resource_labels->at(cloud::kManagedLabel), "true");
  EXPECT_EQ(tp.actions[0].node_pool->resource_labels->at("goog-x"), "y");
  // Not a change the plan reports, but apply still has it to do.
  EXPECT_TRUE(plan.HasChanges());
  EXPECT_TRUE(plan.OnlyAdoptions());
  EXPECT_EQ(plan.Summarize().adopt, 1);
  EXPECT_EQ(plan.Summarize().update, 0);
}

TEST(PlannerTest, AnAdoptionThatAlsoChangesThePoolIsAnUpdate) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("serve", "v6e", "2x2"));
  t.pools[0].annotations.adopt = true;
  cloud::LiveState live = InSync(t);
  ClusterOf(live).node_pools[0].resource_labels = cloud::StringMap{};
  t.pools[0].node_config.labels = cloud::StringMap{{"team", "research"}};  // a node label the live pool lacks
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  ASSERT_EQ(Steps(tp), (std::vector<std::string>{"update serve-0"}));
  EXPECT_EQ(tp.actions[0].reason, "adopt: updatable fields changed (unmanaged pool)");
  EXPECT_FALSE(tp.actions[0].adopt_only);
  EXPECT_FALSE(plan.OnlyAdoptions());
  EXPECT_EQ(plan.Summarize().update, 1);
  EXPECT_EQ(plan.Summarize().adopt, 0);
}

TEST(PlannerTest, SlicesAreRemovedFromTheHighestIndexDown) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("train", "v5p", "2x2x4", 12));
  cloud::LiveState live = InSync(t);
  t.pools[0].slices = 9;
  t.policy.max_delete_percent = 100;
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  EXPECT_EQ(Steps(tp), (std::vector<std::string>{"delete train-11", "delete train-10", "delete train-9"}));
  EXPECT_EQ(tp.actions[0].reason, "no longer declared");
  EXPECT_EQ(tp.actions[0].blast, (BlastRadius{0, 16, 0, 4, true, false}));
  EXPECT_EQ(tp.owned_chips, 12 * 16);
  EXPECT_EQ(tp.delete_chips, 3 * 16);
  EXPECT_EQ(tp.status, TargetStatus::kPlanned);
}

TEST(PlannerTest, UnmanagedPoolsThatNoManifestNamesAreLeftAlone) {
  manifest::Target t = MakeTarget();
  cloud::LiveState live;
  cloud::Cluster c = MakeCluster();
  cloud::NodePool hand;
  hand.name = "default-pool";
  hand.machine_type = "e2-standard-4";
  c.node_pools.push_back(hand);
  live.projects["p"].clusters.push_back(c);
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  EXPECT_TRUE(plan.targets[0].actions.empty());
  EXPECT_FALSE(plan.HasChanges());
}

// Demand-driven pools: listed per target, never acted on, even with prune on
// and the target's whole declared capacity gone.
TEST(PlannerTest, WorkloadOwnedPoolsAreListedNeverPlanned) {
  manifest::Target t = MakeTarget();
  cloud::LiveState live;
  cloud::Cluster c = MakeCluster();
  cloud::NodePool job;
  job.name = "train-0a1b2c3d4e5f";
  job.machine_type = "ct6e-standard-4t";
  job.node_count = 2;
  job.status = "PROVISIONING";
  job.resource_labels = cloud::StringMap{{kWorkloadOwnerLabel, kWorkloadOwner},
                                         {kWorkloadNamespaceLabel, "ml"},
                                         {kWorkloadJobSetLabel, "train"}};
  c.node_pools.push_back(job);
  live.projects["p"].clusters.push_back(c);
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  ASSERT_EQ(plan.targets.size(), 1u);
  EXPECT_TRUE(plan.targets[0].actions.empty());
  EXPECT_FALSE(plan.HasChanges());
  ASSERT_EQ(plan.targets[0].workload_pools.size(), 1u);
  EXPECT_EQ(plan.targets[0].workload_pools[0],
            (WorkloadOwnedPool{"train-0a1b2c3d4e5f", "ml/train", "PROVISIONING", 8}));
}

TEST(PlannerTest, MassDeleteIsRefusedUnlessAllowed) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("train", "v5p", "2x2x4", 4));
  cloud::LiveState live = InSync(t);
  t.pools[0].slices = 1;  // deletes 3 of 4 slices: 75% > 50%
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  EXPECT_EQ(tp.status, TargetStatus::kRefused);
  ASSERT_EQ(tp.errors.size(), 1u);
  EXPECT_EQ(tp.errors[0],
            "plan deletes 48 of the 64 chips this target owns (75%), more than maxDeletePercent 50%; rerun "
            "with --allow-mass-delete if that is intended");
  EXPECT_EQ(Steps(tp).size(), 3u) << "the actions are still shown";
  EXPECT_FALSE(plan.HasChanges()) << "a refused target is not executable";
  EXPECT_TRUE(plan.HasErrors());

  PlanOptions allow;
  allow.allow_mass_delete = true;
  Plan allowed = ComputePlan(RepoOf({t}), live, allow);
  EXPECT_EQ(allowed.targets[0].status, TargetStatus::kPlanned);
  EXPECT_TRUE(allowed.HasChanges());
}

TEST(PlannerTest, MassDeleteAtTheLimitIsAllowed) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("train", "v5p", "2x2x4", 4));
  cloud::LiveState live = InSync(t);
  t.pools[0].slices = 2;  // exactly 50%
  EXPECT_EQ(ComputePlan(RepoOf({t}), live, {}).targets[0].status, TargetStatus::kPlanned);
}

// A release channel keeps auto-upgrade on: the manifest that turns it off is
// refused at plan time, at its line and naming the channel, never at apply.
TEST(PlannerTest, AReleaseChannelRefusesAutoUpgradeFalseAtItsLine) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("train", "v5p", "2x2x4"));
  t.pools[0].management = manifest::Management{std::nullopt, false, {"deploy/p/c/pools.yaml", 12, 5}};
  cloud::LiveState live;
  live.projects["p"].clusters.push_back(MakeCluster());
  ClusterOf(live).release_channel = "REGULAR";
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  EXPECT_EQ(tp.status, TargetStatus::kBlocked);
  EXPECT_TRUE(tp.actions.empty());
  ASSERT_EQ(tp.errors.size(), 1u);
  EXPECT_EQ(tp.errors[0],
            "deploy/p/c/pools.yaml:12:5: spec.management.autoUpgrade: false is refused by cluster c: it is in "
            "release channel REGULAR, where node auto-upgrade cannot be disabled (leave autoUpgrade out, or "
            "set it to true)");
  // Without a channel, GKE takes it.
  ClusterOf(live).release_channel = "";
  EXPECT_EQ(ComputePlan(RepoOf({t}), live, {}).targets[0].status, TargetStatus::kPlanned);
}

// An autoscaled slice's chips are possible capacity, and the plan says so.
TEST(PlannerTest, AnAutoscaledSliceCountsAsPossibleCapacity) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("train", "v5p", "2x2x4"));
  t.pools[0].autoscaling = manifest::Autoscaling{true, 0, 4};
  cloud::LiveState live;
  live.projects["p"].clusters.push_back(MakeCluster());
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const Action& a = plan.targets[0].actions[0];
  EXPECT_EQ(a.blast, (BlastRadius{16, 0, 4, 0, true, true}));
  EXPECT_EQ(a.node_pool->node_count, 0) << "created empty; the autoscaler brings the slice up whole";
  EXPECT_EQ(plan.Summarize().chips_possible, 16);
}

TEST(PlannerTest, PreventDestroyRefusesAReplace) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("train", "v5p", "2x2x4"));
  t.pools[0].annotations.prevent_destroy = true;
  cloud::LiveState live = InSync(t);
  ClusterOf(live).node_pools[0].placement_policy->tpu_topology = "2x2x2";
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  EXPECT_EQ(tp.status, TargetStatus::kRefused);
  ASSERT_EQ(tp.errors.size(), 1u);
  EXPECT_EQ(tp.errors[0],
            "nodePool train-0 is marked tpu-provisioner.io/prevent-destroy: \"true\" and this plan would replace "
            "it (replaced because placementPolicy.tpuTopology cannot change in place (a TPU slice's shape is "
            "fixed when its pool is created); the new pool must obtain its TPU capacity again); remove the "
            "annotation first to allow it");
}

TEST(PlannerTest, PreventDestroyLabelOnLivePoolRefusesADelete) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("serve", "v6e", "2x2", 4));
  t.pools[0].annotations.prevent_destroy = true;
  cloud::LiveState live = InSync(t);
  t.pools[0].slices = 3;
  t.pools[0].annotations.prevent_destroy = false;
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  EXPECT_EQ(plan.targets[0].status, TargetStatus::kRefused);
  EXPECT_NE(plan.targets[0].errors[0].find("serve-3"), std::string::npos);
}

TEST(PlannerTest, AbandonReleasesInsteadOfDeleting) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("serve", "v6e", "2x2", 2));
  t.pools[0].annotations.abandon = true;
  cloud::LiveState live = InSync(t);
  t.pools[0].slices = 1;
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  EXPECT_EQ(tp.status, TargetStatus::kPlanned);
  ASSERT_EQ(Steps(tp), (std::vector<std::string>{"update serve-1"}));
  const Action& a = *Find(tp, "serve-1");
  EXPECT_EQ(a.reason, "no longer declared; deletion-policy: abandon: released from management, not deleted");
  EXPECT_FALSE(a.node_pool->resource_labels->count(cloud::kManagedLabel));
  EXPECT_FALSE(a.node_pool->resource_labels->count(cloud::kTargetHashLabel));
  EXPECT_EQ(a.update_calls, std::vector<UpdateCall>{UpdateCall::kUpdateNodePool});
  EXPECT_EQ(tp.delete_chips, 0);
}

TEST(PlannerTest, VanishedTargetDeletesEverythingAndIsRefusedByDefault) {
  manifest::Target gone = MakeTarget("p", "old");
  gone.pools.push_back(MakePool("train", "v5p", "2x2x4", 2));
  cloud::LiveState live = InSync(gone);
  manifest::Target kept = MakeTarget("p", "c");
  live.projects["p"].clusters.push_back(MakeCluster("p", "c"));
  Plan plan = ComputePlan(RepoOf({kept}), live, {});
  ASSERT_EQ(plan.targets.size(), 2u);
  const TargetPlan& tp = plan.targets[1];
  EXPECT_EQ(tp.key, "p/old");
  EXPECT_TRUE(tp.vanished);
  EXPECT_EQ(tp.status, TargetStatus::kRefused);
  EXPECT_EQ(Steps(tp), (std::vector<std::string>{"delete train-1", "delete train-0"}));
  EXPECT_EQ(tp.actions[0].reason, "target directory removed");

  PlanOptions allow;
  allow.allow_mass_delete = true;
  EXPECT_EQ(ComputePlan(RepoOf({kept}), live, allow).targets[1].status, TargetStatus::kPlanned);
  PlanOptions only;
  only.only_targets = {"p/c"};
  EXPECT_EQ(ComputePlan(RepoOf({kept}), live, only).targets.size(), 1u);
}

TEST(PlannerTest, BlockedTargetGetsNoActionsAndOthersGoOn) {
  manifest::Target bad = MakeTarget("p", "bad");
  bad.pools.push_back(MakePool("x", "v6e", "2x2"));
  bad.errors.push_back({{"deploy/p/bad/x.yaml", 4, 3}, "spec.topology", "expected AxB"});
  manifest::Target good = MakeTarget("p", "c");
  good.pools.push_back(MakePool("y", "v6e", "2x2"));
  cloud::LiveState live = InSync(bad);  // "bad" has an owned pool: a broken file never reads as "nothing desired"
  live.projects["p"].clusters.push_back(MakeCluster("p", "c"));
  Plan plan = ComputePlan(RepoOf({bad, good}), live, {});
  ASSERT_EQ(plan.targets.size(), 2u);
  EXPECT_EQ(plan.targets[0].key, "p/bad");
  EXPECT_EQ(plan.targets[0].status, TargetStatus::kBlocked);
  EXPECT_TRUE(plan.targets[0].actions.empty());
  EXPECT_EQ(plan.targets[0].errors, std::vector<std::string>{"deploy/p/bad/x.yaml:4:3: spec.topology: expected AxB"});
  EXPECT_EQ(Steps(plan.targets[1]), (std::vector<std::string>{"create y-0"}));
}

TEST(PlannerTest, ErrorPoolsAreReplacedToRepair) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("train", "v5p", "2x2x4", 2));
  cloud::LiveState live = InSync(t);
  ClusterOf(live).node_pools[1].status = "ERROR";
  ClusterOf(live).node_pools[1].status_message = "GCE_STOCKOUT";
  ClusterOf(live).node_pools[0].status = "RUNNING_WITH_ERROR";
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  EXPECT_EQ(Steps(tp), (std::vector<std::string>{"replace train-0", "replace train-1"}));
  EXPECT_EQ(tp.actions[1].reason, "node pool is ERROR (GCE_STOCKOUT): replaced to repair");
  EXPECT_EQ(tp.status, TargetStatus::kPlanned) << "a repair is not a mass delete";
}

TEST(PlannerTest, UnmanagedErrorPoolIsNotRepaired) {
  manifest::Target t = MakeTarget();
  cloud::LiveState live;
  cloud::Cluster c = MakeCluster();
  cloud::NodePool p;
  p.name = "hand";
  p.status = "ERROR";
  c.node_pools.push_back(p);
  live.projects["p"].clusters.push_back(c);
  EXPECT_FALSE(ComputePlan(RepoOf({t}), live, {}).HasChanges());
}

TEST(PlannerTest, SuspendedTargetPlansNothing) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("serve", "v6e", "2x2"));
  t.policy.suspend = true;
  cloud::LiveState live;
  live.projects["p"];  // not even a cluster: a suspended target is not looked at
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  EXPECT_EQ(plan.targets[0].status, TargetStatus::kSuspended);
  EXPECT_TRUE(plan.targets[0].actions.empty());
  EXPECT_FALSE(plan.HasChanges());
  EXPECT_FALSE(plan.HasErrors());
}

TEST(PlannerTest, PruneFalseKeepsUndeclaredPools) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("serve", "v6e", "2x2", 2));
  cloud::LiveState live = InSync(t);
  t.pools[0].slices = 1;
  t.policy.prune = false;
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  EXPECT_FALSE(plan.HasChanges());
  EXPECT_EQ(plan.targets[0].warnings,
            std::vector<std::string>{"prune: false: kept node pool serve-1, which no manifest declares"});
}

TEST(PlannerTest, ClusterLocation) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("serve", "v6e", "2x2"));
  cloud::LiveState none;
  none.projects["p"];
  Plan missing = ComputePlan(RepoOf({t}), none, {});
  EXPECT_EQ(missing.targets[0].status, TargetStatus::kBlocked);
  EXPECT_EQ(missing.targets[0].errors,
            std::vector<std::string>{"cluster c not found in project p; node pools need an existing GKE cluster"});

  cloud::LiveState two;
  two.projects["p"].clusters = {MakeCluster("p", "c", "us-central2"), MakeCluster("p", "c", "europe-west4")};
  Plan ambiguous = ComputePlan(RepoOf({t}), two, {});
  EXPECT_EQ(ambiguous.targets[0].status, TargetStatus::kBlocked);
  EXPECT_EQ(ambiguous.targets[0].errors,
            std::vector<std::string>{"cluster c exists in several locations of project p (us-central2, "
                                     "europe-west4); set spec.location in cluster.yaml to choose one"});

  t.policy.location = "europe-west4";
  Plan chosen = ComputePlan(RepoOf({t}), two, {});
  EXPECT_EQ(chosen.targets[0].status, TargetStatus::kPlanned);
  EXPECT_EQ(chosen.targets[0].location, "europe-west4");
  EXPECT_EQ(chosen.targets[0].actions[0].resource.location, "europe-west4");
}

manifest::TPUNodeGroup Group(manifest::TargetSizePolicyMode mode, const std::string& image = "img") {
  manifest::TPUNodeGroup g;
  g.name = "slice";
  g.where = {"deploy/p/c/group.yaml", 1, 1};
  g.project = "p";
  g.node_location = "us-east5-a";
  g.node_count = 4;
  g.topology = "4x4";
  g.shape = *catalog::ResolveShape("v6e", "4x4");
  g.target_size_policy_mode = mode;
  manifest::TPUNodeGroup::InstanceConfig ic;
  ic.machine_type = "ct6e-standard-4t";
  ic.image = image;
  g.instance_config = ic;
  return g;
}

TEST(PlannerTest, NodeGroupCreateOrderAndDependencies) {
  manifest::Target t = MakeTarget();
  t.groups.push_back(Group(manifest::TargetSizePolicyMode::kBulk));
  cloud::LiveState live;
  live.projects["p"];
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  ASSERT_EQ(tp.actions.size(), 3u);
  EXPECT_EQ(tp.status, TargetStatus::kPlanned) << "no node pools: no GKE cluster needed";
  EXPECT_EQ(tp.actions[0].resource.kind, ResourceKind::kWorkloadPolicy);
  EXPECT_EQ(tp.actions[1].resource.kind, ResourceKind::kInstanceTemplate);
  EXPECT_EQ(tp.actions[2].resource.kind, ResourceKind::kInstanceGroupManager);
  EXPECT_TRUE(tp.actions[1].depends_on.empty()) << "the template does not name the workload policy";
  EXPECT_EQ(tp.actions[2].depends_on,
            (std::vector<std::string>{"instanceTemplate:p/" + tp.actions[1].resource.name,
                                      "workloadPolicy:p/us-east5/slice-wp"}));
  EXPECT_EQ(tp.actions[2].blast, (BlastRadius{16, 0, 4, 0, true, false}));
}

TEST(PlannerTest, NodeGroupInSyncAndDeletedInReverse) {
  manifest::Target t = MakeTarget();
  t.groups.push_back(Group(manifest::TargetSizePolicyMode::kBulk));
  cloud::LiveState live = InSync(t);
  EXPECT_FALSE(ComputePlan(RepoOf({t}), live, {}).HasChanges());
  EXPECT_EQ(ComputePlan(RepoOf({t}), live, {}).targets[0].owned_chips, 16);

  manifest::Target empty = MakeTarget();
  PlanOptions allow;
  allow.allow_mass_delete = true;
  Plan plan = ComputePlan(RepoOf({empty}), live, allow);
  const TargetPlan& tp = plan.targets[0];
  ASSERT_EQ(tp.actions.size(), 3u);
  EXPECT_EQ(tp.actions[0].resource.kind, ResourceKind::kInstanceGroupManager);
  EXPECT_EQ(tp.actions[1].resource.kind, ResourceKind::kInstanceTemplate);
  EXPECT_EQ(tp.actions[2].resource.kind, ResourceKind::kWorkloadPolicy);
  EXPECT_EQ(tp.actions[1].depends_on, std::vector<std::string>{"instanceGroupManager:p/us-east5-a/slice"});
  EXPECT_EQ(tp.actions[2].depends_on, (std::vector<std::string>{"instanceGroupManager:p/us-east5-a/slice",
                                                                "instanceTemplate:p/" + tp.actions[1].resource.name}));
  EXPECT_EQ(tp.delete_chips, 16);
}

TEST(PlannerTest, BulkTemplateChangeIsNewTemplateAndMigReplace) {
  manifest::Target t = MakeTarget();
  t.groups.push_back(Group(manifest::TargetSizePolicyMode::kBulk));
  cloud::LiveState live = InSync(t);
  std::string old_template = live.projects["p"].instance_templates[0].name;
  t.groups[0] = Group(manifest::TargetSizePolicyMode::kBulk, "img2");
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  std::vector<std::string> steps = Steps(tp);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].rfind("create slice-", 0), 0u);
  EXPECT_EQ(steps[1], "replace slice");
  EXPECT_EQ(steps[2], "delete " + old_template);
  const Action& mig = *Find(tp, "slice");
  EXPECT_EQ(mig.changes.at(0).path, "instanceTemplate");
  EXPECT_TRUE(mig.changes.at(0).forces_replace);
  EXPECT_EQ(mig.blast, (BlastRadius{16, 16, 4, 4, true, false}));
  EXPECT_EQ(Find(tp, old_template)->depends_on, std::vector<std::string>{"instanceGroupManager:p/us-east5-a/slice"});
}

TEST(PlannerTest, IndividualTemplateChangeIsInPlace) {
  manifest::Target t = MakeTarget();
  t.groups.push_back(Group(manifest::TargetSizePolicyMode::kIndividual));
  cloud::LiveState live = InSync(t);
  t.groups[0] = Group(manifest::TargetSizePolicyMode::kIndividual, "img2");
  t.groups[0].node_count = 6;
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const Action& mig = *Find(plan.targets[0], "slice");
  EXPECT_EQ(mig.kind, ActionKind::kUpdate);
  EXPECT_EQ(mig.update_calls,
            (std::vector<UpdateCall>{UpdateCall::kSetInstanceTemplate, UpdateCall::kResizeGroup}));
  EXPECT_EQ(mig.blast, (BlastRadius{8, 0, 2, 0, false, false}));
}

TEST(PlannerTest, UnmanagedMigIsAConflict) {
  manifest::Target t = MakeTarget();
  t.groups.push_back(Group(manifest::TargetSizePolicyMode::kBulk));
  cloud::LiveState live = InSync(t);
  live.projects["p"].instance_group_managers[0].description = "";
  EXPECT_EQ(ComputePlan(RepoOf({t}), live, {}).targets[0].status, TargetStatus::kBlocked);
}

TEST(PlannerTest, ProjectsToRefresh) {
  manifest::Target a = MakeTarget("p1", "c"), b = MakeTarget("p2", "c"), c = MakeTarget("p1", "d");
  EXPECT_EQ(ProjectsToRefresh(RepoOf({a, b, c}), {}), (std::vector<std::string>{"p1", "p2"}));
  PlanOptions only;
  only.only_targets = {"p2/c"};
  EXPECT_EQ(ProjectsToRefresh(RepoOf({a, b, c}), only), std::vector<std::string>{"p2"});
}

TEST(FingerprintTest, StableUnderOrderAndMovesWithState) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("serve", "v6e", "2x2", 3));
  cloud::LiveState live = InSync(t);
  std::string fp = Fingerprint(live.projects["p"]);
  EXPECT_EQ(fp.size(), 16u);
  cloud::LiveState reordered = live;
  std::reverse(ClusterOf(reordered).node_pools.begin(), ClusterOf(reordered).node_pools.end());
  ClusterOf(reordered).node_pools[0].status_message = "noise";
  EXPECT_EQ(Fingerprint(reordered.projects["p"]), fp);

  Plan plan = ComputePlan(RepoOf({t}), live, {});
  EXPECT_EQ(plan.live_fingerprints.at("p"), fp);
  EXPECT_TRUE(CheckLiveUnchanged(plan, reordered).ok());
  cloud::LiveState moved = live;
  ClusterOf(moved).node_pools[1].node_count = 2;
  Status s = CheckLiveUnchanged(plan, moved);
  EXPECT_EQ(s.code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(s.message(), "live state changed since the plan was made (project p); run plan again");
}

}  // namespace
}  // namespace tpu::plan
