// Plan rules over whole targets: create, noop, delete, slices, ownership and
// adopt, workload-owned pools, cluster location, fingerprints. Guards and the
// target lifecycle are in planner_guards_test.cc, TPUNodeGroups in
// planner_groups_test.cc.
#include "plan/planner.h"

#include <gtest/gtest.h>

#include "plan/fingerprint.h"
#include "plan/ownership.h"
#include "plan/plan_test_util.h"

namespace tpu::plan {
namespace {

using namespace testing;  // plan_test_util.h

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

// A plan only shown or applied keeps no noop's body: the fleet is held once,
// as live state. The changes keep theirs; the same plan is otherwise unchanged.
TEST(PlannerTest, NoopsKeepTheirBodiesOnlyForJson) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("train", "v5p", "2x2x4", 2));
  t.pools.push_back(MakePool("big", "v7x", "4x4x4"));
  cloud::LiveState live = InSync(t);
  t.pools[0].slices = 3;  // one create beside the noops
  Plan with = ComputePlan(RepoOf({t}), live, {});
  PlanOptions lean;
  lean.noop_bodies = false;
  Plan without = ComputePlan(RepoOf({t}), live, lean);
  ASSERT_EQ(Steps(with.targets[0]), Steps(without.targets[0]));
  EXPECT_EQ(with.Summarize(), without.Summarize());
  int noops = 0;
  for (size_t i = 0; i < with.targets[0].actions.size(); ++i) {
    const Action& a = with.targets[0].actions[i];
    const Action& b = without.targets[0].actions[i];
    EXPECT_TRUE(a.node_pool || a.workload_policy) << a.resource.Id() << ": JSON shows every body";
    if (a.kind == ActionKind::kNoop) {
      ++noops;
      EXPECT_FALSE(b.node_pool || b.workload_policy || b.instance_template || b.instance_group_manager)
          << b.resource.Id();
    } else {
      EXPECT_TRUE(a.node_pool == b.node_pool) << b.resource.Id();
      EXPECT_TRUE(b.node_pool) << b.resource.Id();
    }
  }
  EXPECT_EQ(noops, 4) << "3 pools and the workload policy";
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
