// Capacity ladders at plan time: a new slice starts on the best rung with
// room and carries the rest as fallbacks; a running slice stays on its rung
// until watch asks for a move back up; pools without a ladder are as before.
#include "plan/ladder.h"

#include <gtest/gtest.h>

#include "plan/plan_json.h"
#include "plan/plan_test_util.h"
#include "plan/planner.h"
#include "plan/pool_slot.h"
#include "plan/render_text.h"

namespace tpu::plan {
namespace {

using namespace testing;  // plan_test_util.h

manifest::Capacity Reserved(const std::string& name) {
  return {manifest::CapacityType::kReservation, name, ""};
}
const manifest::Capacity kOnDemand{manifest::CapacityType::kOnDemand, "", ""};
const manifest::Capacity kSpot{manifest::CapacityType::kSpot, "", ""};

// v5p 2x2x4 (4 VMs a slice) on [reservation res-a, onDemand, spot].
manifest::Target LadderTarget(int slices = 1) {
  manifest::Target t = MakeTarget();
  manifest::TPUNodePool p = MakePool("train", "v5p", "2x2x4", slices);
  p.ladder = {Reserved("res-a"), kOnDemand, kSpot};
  p.capacity = p.ladder.front();
  t.pools.push_back(p);
  return t;
}

cloud::Reservation Res(const std::string& name, int count, int in_use) {
  cloud::Reservation r;
  r.name = name;
  r.project = "p";
  r.zone = "us-central2-b";
  r.count = count;
  r.in_use_count = in_use;
  return r;
}

// The slice's pool as running on rung `rung`, as GKE reports it.
cloud::NodePool Running(const manifest::Target& t, int rung, int slice = 0) {
  const manifest::TPUNodePool& spec = t.pools[0];
  return AsReported(AtRung(t, spec, DesiredNodePool(t, spec, slice), rung));
}

TEST(LadderTest, ANewSliceStartsOnItsFirstRungWithTheOthersAsFallbacks) {
  manifest::Target t = LadderTarget();
  cloud::LiveState live;
  live.projects["p"].clusters.push_back(MakeCluster());
  live.projects["p"].reservations.push_back(Res("res-a", 8, 0));
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  ASSERT_EQ(Steps(tp), (std::vector<std::string>{"create train-0"}));
  const Action& a = tp.actions[0];
  ASSERT_TRUE(a.node_pool->reservation_affinity);
  EXPECT_EQ(a.node_pool->reservation_affinity->values, (std::vector<std::string>{"res-a"}));
  EXPECT_EQ(a.node_pool->resource_labels->at(kRungLabel), "0");
  ASSERT_EQ(a.fallbacks.size(), 2u);
  EXPECT_FALSE(a.fallbacks[0].spot);
  EXPECT_FALSE(a.fallbacks[0].reservation_affinity) << "on-demand is bound to no reservation";
  EXPECT_EQ(a.fallbacks[0].resource_labels->at(kRungLabel), "1");
  EXPECT_TRUE(a.fallbacks[1].spot);
  EXPECT_EQ(a.fallbacks[1].resource_labels->at(kRungLabel), "2");
  ASSERT_EQ(tp.ladder.size(), 1u);
  EXPECT_EQ(tp.ladder[0].rung, 0);
  EXPECT_EQ(tp.ladder[0].capacity, "reservation res-a");
}

// Room for one slice of two: the second starts a rung down, at plan time,
// instead of being blocked — nothing is held back and nothing stocks out.
TEST(LadderTest, AReservationWithoutRoomStartsTheSliceOnTheNextRung) {
  manifest::Target t = LadderTarget(2);
  cloud::LiveState live;
  live.projects["p"].clusters.push_back(MakeCluster());
  live.projects["p"].reservations.push_back(Res("res-a", 6, 1));  // 5 free: one slice of 4
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  EXPECT_TRUE(tp.blocked_actions.empty());
  EXPECT_FALSE(plan.HasErrors());
  const Action* second = Find(tp, "train-1");
  ASSERT_NE(second, nullptr);
  EXPECT_FALSE(second->node_pool->reservation_affinity) << "rung 1, on-demand";
  EXPECT_EQ(second->node_pool->name, "train-1");
  EXPECT_EQ(second->fallbacks.size(), 1u) << "only spot is left below it";
  ASSERT_EQ(tp.ladder.size(), 2u);
  EXPECT_EQ(tp.ladder[1].pool, "train-1");
  EXPECT_EQ(tp.ladder[1].rung, 1);
  EXPECT_EQ(tp.ladder[1].capacity, "onDemand");
  EXPECT_NE(tp.ladder[1].why.find("reservation p/res-a has 1 VM free"), std::string::npos) << tp.ladder[1].why;
  ASSERT_EQ(tp.reservations.size(), 1u);
  EXPECT_EQ(tp.reservations[0].takes, 4);
  EXPECT_EQ(tp.reservations[0].blocked, 0);
}

TEST(LadderTest, ASliceOnALowerRungStaysThereAndThePlanSaysWhere) {
  manifest::Target t = LadderTarget();
  cloud::LiveState live;
  live.projects["p"].clusters.push_back(MakeCluster());
  ClusterOf(live).node_pools.push_back(Running(t, 2));
  live.projects["p"].reservations.push_back(Res("res-a", 8, 0));  // room now: still no change in a plan
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  EXPECT_FALSE(plan.HasChanges()) << Steps(tp).size();
  ASSERT_EQ(tp.ladder.size(), 1u);
  EXPECT_EQ(tp.ladder[0].rung, 2);
  EXPECT_EQ(tp.ladder[0].capacity, "spot");
  const std::string text = RenderText(plan, {});
  EXPECT_NE(text.find("Capacity ladder: train-0 on rung 2 of 3 (spot)"), std::string::npos) << text;
  auto round = PlanFromJson(PlanToJson(plan));
  ASSERT_TRUE(round.ok());
  EXPECT_EQ(round->targets[0].ladder, tp.ladder);
}

TEST(LadderTest, WatchsMoveBackUpIsACreateBeforeDeleteReplaceToTheBetterRung) {
  manifest::Target t = LadderTarget();
  cloud::LiveState live;
  live.projects["p"].clusters.push_back(MakeCluster());
  ClusterOf(live).node_pools.push_back(Running(t, 2));
  PlanOptions o;
  o.ladder_moves["p/c/train-0"] = 0;
  Plan plan = ComputePlan(RepoOf({t}), live, o);
  const TargetPlan& tp = plan.targets[0];
  ASSERT_EQ(Steps(tp), (std::vector<std::string>{"replace train-0"}));
  const Action& a = tp.actions[0];
  EXPECT_TRUE(a.ladder_move);
  EXPECT_NE(a.node_pool->name, "train-0") << "created beside the running pool";
  EXPECT_EQ(SlotOf(*a.node_pool), "train-0");
  EXPECT_EQ(a.node_pool->reservation_affinity->values, (std::vector<std::string>{"res-a"}));
  EXPECT_TRUE(a.fallbacks.empty()) << "a move back up probes one rung";
  EXPECT_NE(a.reason.find("moving back up to rung 0 (reservation res-a) from rung 2 (spot)"), std::string::npos)
      << a.reason;
  auto round = PlanFromJson(PlanToJson(plan));
  ASSERT_TRUE(round.ok());
  EXPECT_TRUE(round->targets[0].actions[0].ladder_move);
}

// A move interrupted between its create and its delete: the better rung's
// pool is kept, the other deleted; no third pool, no move again.
TEST(LadderTest, AnInterruptedMoveKeepsTheBetterRungsPool) {
  manifest::Target t = LadderTarget();
  cloud::LiveState live;
  live.projects["p"].clusters.push_back(MakeCluster());
  cloud::NodePool better = Running(t, 0);
  better = AsPoolNamed(better, ReplacementPoolName(AtRung(t, t.pools[0], DesiredNodePool(t, t.pools[0], 0), 0)));
  ClusterOf(live).node_pools.push_back(Running(t, 2));
  ClusterOf(live).node_pools.push_back(better);
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  ASSERT_EQ(Steps(tp), (std::vector<std::string>{"delete train-0"}));
  EXPECT_EQ(tp.actions[0].superseded_by, better.name);
  EXPECT_EQ(tp.ladder[0].rung, 0);
}

TEST(LadderTest, PoolsWithoutALadderAreAsBefore) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("train", "v5p", "2x2x4", 1));
  cloud::LiveState live;
  live.projects["p"].clusters.push_back(MakeCluster());
  Plan plan = ComputePlan(RepoOf({t}), live, {});
  const TargetPlan& tp = plan.targets[0];
  ASSERT_EQ(Steps(tp), (std::vector<std::string>{"create train-0"}));
  EXPECT_TRUE(tp.actions[0].fallbacks.empty());
  EXPECT_FALSE(tp.actions[0].node_pool->resource_labels->count(kRungLabel));
  EXPECT_TRUE(tp.ladder.empty());
  EXPECT_EQ(PlanToJson(plan).find("fallbacks"), std::string::npos);
}

}  // namespace
}  // namespace tpu::plan
