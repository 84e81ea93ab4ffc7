// TPUNodeGroups in a plan: the create order and dependencies (policy, template,
// MIG), deletes in reverse, a BULK template change as a new template and a MIG
// replace, an INDIVIDUAL one in place, and an unmanaged MIG as a conflict.
#include "plan/planner.h"

#include <gtest/gtest.h>

#include "plan/fingerprint.h"
#include "plan/ownership.h"
#include "plan/plan_test_util.h"

namespace tpu::plan {
namespace {

using namespace testing;  // plan_test_util.h

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

}  // namespace
}  // namespace tpu::plan
