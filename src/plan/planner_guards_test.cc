// Plan guards and the target lifecycle: maxDeletePercent, release channels,
// autoscaled capacity, prevent-destroy, abandon, vanished, blocked and
// suspended targets, repair of pools in ERROR, prune: false.
#include "plan/planner.h"

#include <gtest/gtest.h>

#include "plan/fingerprint.h"
#include "plan/ownership.h"
#include "plan/plan_test_util.h"

namespace tpu::plan {
namespace {

using namespace testing;  // plan_test_util.h

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

}  // namespace
}  // namespace tpu::plan
