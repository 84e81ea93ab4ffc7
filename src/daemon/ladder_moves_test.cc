// LadderMoves: when watch tries to move a slice back up its capacity ladder,
// onto which rung, how many at once, and how it backs off.
#include "daemon/ladder_moves.h"

#include <gtest/gtest.h>

#include "plan/desired.h"
#include "plan/ladder.h"
#include "plan/plan_test_util.h"
#include "plan/pool_slot.h"

namespace tpu::daemon {
namespace {

using namespace plan::testing;
using std::chrono::seconds;

const manifest::Capacity kReserved{manifest::CapacityType::kReservation, "res-a", ""};
const manifest::Capacity kOnDemand{manifest::CapacityType::kOnDemand, "", ""};
const manifest::Capacity kSpot{manifest::CapacityType::kSpot, "", ""};

manifest::Target Target(int slices, std::vector<manifest::Capacity> ladder) {
  manifest::Target t = MakeTarget();
  manifest::TPUNodePool p = MakePool("train", "v5p", "2x2x4", slices);  // 4 VMs a slice
  p.location = "us-central2-b";
  p.ladder = std::move(ladder);
  p.capacity = p.ladder.front();
  t.pools.push_back(p);
  return t;
}

// Live state with slice i of `t` running on rung rungs[i], and res-a with `free` VMs.
cloud::LiveState Live(const manifest::Target& t, const std::vector<int>& rungs, int free) {
  cloud::LiveState live;
  cloud::Cluster c = MakeCluster();
  for (size_t i = 0; i < rungs.size(); ++i)
    c.node_pools.push_back(AsReported(
        plan::AtRung(t, t.pools[0], plan::DesiredNodePool(t, t.pools[0], static_cast<int>(i)), rungs[i])));
  live.projects["p"].clusters.push_back(c);
  cloud::Reservation r;
  r.name = "res-a";
  r.project = "p";
  r.zone = "https://www.googleapis.com/compute/v1/projects/p/zones/us-central2-b";
  r.count = 8;
  r.in_use_count = 8 - free;
  live.projects["p"].reservations.push_back(r);
  return live;
}

TEST(LadderMovesTest, FirstTryAfterTheRetryThenOneSlicePerTargetOntoTheBestRungWithRoom) {
  manifest::Target t = Target(2, {kReserved, kOnDemand, kSpot});
  LadderMoves moves(seconds(60));
  const TimePoint t0{};
  cloud::LiveState live = Live(t, {2, 2}, 4);  // room for one slice in the reservation
  EXPECT_TRUE(moves.Due({&t}, live, t0).empty()) << "just landed: not before the retry";
  EXPECT_EQ(moves.NextDue(), t0 + seconds(60));
  EXPECT_EQ(moves.TargetsDue(t0 + seconds(60)), std::set<std::string>{"p/c"});
  auto due = moves.Due({&t}, live, t0 + seconds(60));
  EXPECT_EQ(due, (std::map<std::string, int>{{"p/c/train-0", 0}})) << "one slice, to the reservation";
  ASSERT_EQ(moves.Snapshot(t0).size(), 2u);
}

TEST(LadderMovesTest, AReservationWithoutRoomIsSkippedForTheRungTheCreateProbes) {
  manifest::Target t = Target(1, {kReserved, kOnDemand, kSpot});
  LadderMoves moves(seconds(60));
  const TimePoint t0{};
  cloud::LiveState live = Live(t, {2}, 3);  // 3 VMs free, 4 needed
  moves.Observe({&t}, live, t0);
  EXPECT_EQ(moves.Due({&t}, live, t0 + seconds(60)), (std::map<std::string, int>{{"p/c/train-0", 1}}));
  // A ladder whose only better rung is a reservation without room: no try, and says why.
  manifest::Target r = Target(1, {kReserved, kSpot});
  LadderMoves only(seconds(60));
  cloud::LiveState rl = Live(r, {1}, 3);
  only.Observe({&r}, rl, t0);
  EXPECT_TRUE(only.Due({&r}, rl, t0 + seconds(60)).empty());
  ASSERT_EQ(only.Snapshot(t0).size(), 1u);
  EXPECT_NE(only.Snapshot(t0)[0].last.find("3 VMs free, needs 4 VMs"), std::string::npos)
      << only.Snapshot(t0)[0].last;
}

TEST(LadderMovesTest, FailedTriesBackOffDoublingAndASliceOnItsBestRungIsForgotten) {
  manifest::Target t = Target(1, {kOnDemand, kSpot});
  LadderMoves moves(seconds(10));
  TimePoint now{};
  cloud::LiveState live = Live(t, {1}, 0);
  moves.Observe({&t}, live, now);
  std::vector<int> waits;
  for (int i = 0; i < 6; ++i) {
    now = *moves.NextDue();
    auto due = moves.Due({&t}, live, now);
    ASSERT_EQ(due.size(), 1u);
    apply::ApplyReport report;
    apply::TaskResult failed;
    failed.state = apply::TaskResult::State::kWaitingForCapacity;
    plan::Plan to_apply;  // the move was planned and applied, and stocked out
    plan::TargetPlan tp;
    tp.key = "p/c";
    plan::Action a;
    a.kind = plan::ActionKind::kReplace;
    a.resource = {plan::ResourceKind::kNodePool, "p", "us-central2", "c", "train-0"};
    a.ladder_move = true;
    a.node_pool = plan::AsPoolNamed(live.projects["p"].clusters[0].node_pools[0], "train-0-r1");
    tp.actions.push_back(a);
    to_apply.targets.push_back(tp);
    failed.id = a.resource.Id();
    report.tasks.push_back(failed);
    moves.Record(due, to_apply, report, {}, now);
    waits.push_back(static_cast<int>(std::chrono::duration_cast<seconds>(*moves.NextDue() - now).count()));
  }
  EXPECT_EQ(waits, (std::vector<int>{20, 40, 80, 160, 160, 160})) << "doubling, up to 16×";
  EXPECT_EQ(moves.Snapshot(now)[0].failures, 6);
  // Back on its best rung (someone moved it): forgotten.
  moves.Observe({&t}, Live(t, {0}, 0), now);
  EXPECT_TRUE(moves.Snapshot(now).empty());
  EXPECT_FALSE(moves.NextDue());
}

}  // namespace
}  // namespace tpu::daemon
