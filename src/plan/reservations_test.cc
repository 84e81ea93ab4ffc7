// Reservation-aware plans: headroom before → after, in text and JSON, and the
// slices a reservation has no room for held back at plan time, with the numbers.
#include "plan/reservations.h"

#include <gtest/gtest.h>

#include "plan/plan_json.h"
#include "plan/plan_test_util.h"
#include "plan/planner.h"
#include "plan/render_text.h"

namespace tpu::plan {
namespace {

using namespace testing;  // plan_test_util.h

// v5p 2x2x4: 4 VMs a slice, from reservation `name` of `owner` ("" = the target's).
manifest::TPUNodePool ReservedPool(int slices, const std::string& name, const std::string& owner = "") {
  manifest::TPUNodePool p = MakePool("train", "v5p", "2x2x4", slices);
  p.capacity.type = manifest::CapacityType::kReservation;
  p.capacity.reservation = name;
  p.capacity.reservation_project = owner;
  return p;
}

cloud::Reservation Res(const std::string& project, const std::string& name, int count, int in_use) {
  cloud::Reservation r;
  r.name = name;
  r.project = project;
  r.zone = "us-central2-b";
  r.count = count;
  r.in_use_count = in_use;
  r.machine_type = "ct5p-hightpu-4t";
  r.specific_reservation_required = true;
  return r;
}

TEST(ReservationsTest, RoomForThreeOfFourSlicesBlocksTheFourthWithTheNumbers) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(ReservedPool(4, "res-a"));
  cloud::LiveState live;
  live.projects["p"].clusters.push_back(MakeCluster());
  live.projects["p"].reservations.push_back(Res("p", "res-a", 14, 2));  // 12 free: 3 slices of 4
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  EXPECT_EQ(tp.status, TargetStatus::kPlanned) << "the slices that fit are still applied";
  EXPECT_EQ(Steps(tp), (std::vector<std::string>{"create train-0", "create train-1", "create train-2"}));
  ASSERT_EQ(tp.blocked_actions.size(), 1u);
  EXPECT_EQ(tp.blocked_actions[0].resource.name, "train-3");
  EXPECT_EQ(tp.blocked_actions[0].reason,
            "reservation p/res-a has 0 VMs free (14 reserved, 2 in use, 12 taken by this plan); this needs 4 VMs");
  ASSERT_EQ(tp.reservations.size(), 1u);
  const ReservationUse& u = tp.reservations[0];
  EXPECT_TRUE(u.found);
  EXPECT_EQ(u.FreeBefore(), 12);
  EXPECT_EQ(u.FreeAfter(), 0);
  EXPECT_EQ(u.blocked, 4);
  EXPECT_TRUE(plan.HasErrors()) << "a plan that cannot be had is an error for CI";
  EXPECT_EQ(plan.Summarize().create, 3);
}

TEST(ReservationsTest, ASharedReservationIsCountedFromItsOwnersProject) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(ReservedPool(2, "shared-r", "owner-proj"));
  cloud::LiveState live;
  live.projects["p"].clusters.push_back(MakeCluster());
  // A reservation of the same name in the target's own project is not the one.
  live.projects["p"].reservations.push_back(Res("p", "shared-r", 100, 0));
  live.projects["owner-proj"].reservations.push_back(Res("owner-proj", "shared-r", 6, 0));
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  ASSERT_EQ(tp.reservations.size(), 1u);
  EXPECT_EQ(tp.reservations[0].project, "owner-proj");
  EXPECT_EQ(tp.reservations[0].FreeBefore(), 6);
  EXPECT_EQ(tp.reservations[0].FreeAfter(), 2);
  ASSERT_EQ(tp.blocked_actions.size(), 1u);
  EXPECT_EQ(tp.blocked_actions[0].resource.name, "train-1");
}

TEST(ReservationsTest, HeadroomShowsInTextAndJsonAndSurvivesAPlanFile) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(ReservedPool(1, "res-a"));
  cloud::LiveState live;
  live.projects["p"].clusters.push_back(MakeCluster());
  live.projects["p"].reservations.push_back(Res("p", "res-a", 10, 3));
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const std::string text = RenderText(plan, {});
  EXPECT_NE(text.find("Reservation p/res-a (us-central2-b): 10 VMs reserved, 3 in use; free 7 → 3"),
            std::string::npos)
      << text;
  const std::string json = PlanToJson(plan, -1);
  auto back = PlanFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->targets[0].reservations.size(), 1u);
  EXPECT_EQ(back->targets[0].reservations[0], plan.targets[0].reservations[0]);
  EXPECT_NE(json.find("\"freeAfter\":3"), std::string::npos) << json;
}

TEST(ReservationsTest, AReservationBoundNodeGroupIsCheckedToo) {
  manifest::Target t = MakeTarget();
  manifest::TPUNodeGroup g;
  g.name = "slice";
  g.project = "p";
  g.node_location = "us-central2-b";
  g.node_count = 4;
  g.topology = "4x4";
  g.shape = *catalog::ResolveShape("v6e", "4x4");
  g.target_size_policy_mode = manifest::TargetSizePolicyMode::kBulk;
  manifest::TPUNodeGroup::InstanceConfig ic;
  ic.machine_type = "ct6e-standard-4t";
  ic.provisioning_model = manifest::ProvisioningModel::kReservationBound;
  ic.reservation = "bulk-res";
  g.instance_config = ic;
  t.groups.push_back(g);
  cloud::LiveState live;
  live.projects["p"].reservations.push_back(Res("p", "bulk-res", 3, 0));
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  ASSERT_EQ(tp.blocked_actions.size(), 1u);
  EXPECT_EQ(tp.blocked_actions[0].resource.kind, ResourceKind::kInstanceGroupManager);
  EXPECT_EQ(tp.blocked_actions[0].reason,
            "reservation p/bulk-res has 3 VMs free (3 reserved, 0 in use, 0 taken by this plan); this needs 4 VMs");
}

TEST(ReservationsTest, AnUnknownReservationBlocksNothingAndSaysSo) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(ReservedPool(2, "not-read"));
  cloud::LiveState live;
  live.projects["p"].clusters.push_back(MakeCluster());
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  EXPECT_TRUE(plan.targets[0].blocked_actions.empty());
  ASSERT_EQ(plan.targets[0].reservations.size(), 1u);
  EXPECT_FALSE(plan.targets[0].reservations[0].found);
  EXPECT_NE(RenderText(plan, {}).find("not found in the refresh; headroom unknown"), std::string::npos);
}

}  // namespace
}  // namespace tpu::plan
