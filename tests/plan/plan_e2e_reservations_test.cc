// Reservation-aware plans through the real binary and the emulator: a
// reservation shared from another project is read from its owner, its free
// VMs before → after are shown, and the slice it has no room for is held back
// with the numbers (issue: capacity that is actually there).
#include "plan/plan_e2e_fixture.h"

namespace tpu::plan::e2e {
namespace {

class PlanE2EReservationsTest : public PlanE2ETest {};

TEST_F(PlanE2EReservationsTest, ASharedReservationIsReadFromItsOwnerAndHoldsBackWhatDoesNotFit) {
  // 12 VMs reserved by owner-proj, shared with proj-e2e, 4 of them in use:
  // room for 2 of train's 4 slices (4 VMs each).
  emu_->SetCapacity(json::parse(R"({"reservations":[{"name":"big-res","project":"owner-proj",
      "zone":"us-central2-b","machineType":"ct5p-hightpu-4t","count":12,"used":16,
      "specificReservationRequired":true,"shared":["proj-e2e"]}]})"));
  Write("deploy/proj-e2e/c/train.yaml", std::string(kV5p) +
                                            "  capacity:\n    type: reservation\n    reservation: big-res\n"
                                            "    reservationProject: owner-proj\n");
  json plan = PlanJson("", 1);  // held-back actions are errors
  const json& t = Target(plan, "proj-e2e/c");
  ASSERT_EQ(t["reservations"].size(), 1u) << t.dump(2);
  const json& r = t["reservations"][0];
  EXPECT_EQ(r["project"], "owner-proj");
  EXPECT_EQ(r["found"], true);
  EXPECT_EQ(r["count"], 12);
  EXPECT_EQ(r["inUse"], 4);
  EXPECT_EQ(r["freeBefore"], 8);
  EXPECT_EQ(r["freeAfter"], 0);
  std::vector<std::string> creates;
  for (const auto& s : Steps(plan, "proj-e2e/c"))
    if (s.rfind("create train-", 0) == 0) creates.push_back(s);
  EXPECT_EQ(creates, (std::vector<std::string>{"create train-0", "create train-1"}));
  ASSERT_EQ(t["blockedActions"].size(), 2u);
  EXPECT_EQ(t["blockedActions"][0]["reason"],
            "reservation owner-proj/big-res has 0 VMs free (12 reserved, 4 in use, 8 taken by this plan); "
            "this needs 4 VMs");
  // The owner's reservation came with one GET from the owner; only proj-e2e's
  // own reservations were listed.
  const auto routes = emu_->counters().calls_by_route;
  auto calls = [&](const std::string& route) { return routes.count(route) ? routes.at(route) : 0; };
  EXPECT_EQ(calls("GET /compute/v1/projects/{project}/zones/{zone}/reservations/big-res"), 1);
  EXPECT_EQ(calls("GET /compute/v1/projects/{project}/aggregated/reservations"), 1);

  BinaryRun text = RunPlan("");
  EXPECT_NE(text.out.find("Reservation owner-proj/big-res (us-central2-b): 12 VMs reserved, 4 in use; free 8 → 0"),
            std::string::npos)
      << text.out << text.err;
  EXPECT_NE(text.out.find("Blocked: create nodePool \"train-3\""), std::string::npos) << text.out;
}

}  // namespace
}  // namespace tpu::plan::e2e
