// End to end: the real `tpu-provisioner apply` against the cloud emulator over
// loopback. The emulator lives in the test process, so it outlives every
// apply — including ones killed with SIGKILL — as the real cloud would.
// Asserts exit codes, what exists in the emulator afterwards, and its counters.
#include <random>

#include <nlohmann/json.hpp>

#include "apply_e2e_fixture.h"

namespace tpu::apply {
namespace {

using nlohmann::json;
using testing::Pool;

const std::string kPools = Pool("small", "2x2", 2) + "---\n" + Pool("big", "4x4", 1, "us-east5-a") +
                          "---\n" + Pool("one", "1x1", 1);

class ApplyE2ETest : public testing::ApplyE2EBase {
 protected:
  static constexpr int kClusters = 4;

  void SetUp() override {
    ApplyE2EBase::SetUp();
    StartEmulator();
    for (int c = 0; c < kClusters; ++c) {
      std::string cluster = "c" + std::to_string(c);
      AddCluster(cluster);
      // Single-host pools (one of two slices) in zone b, a multi-host one in zone a: 4 pools.
      Write("deploy/proj-apply/" + cluster + "/pools.yaml", kPools);
    }
  }

  std::map<std::string, std::string> AllRunning() const {
    std::map<std::string, std::string> want;
    for (int c = 0; c < kClusters; ++c)
      for (const char* n : {"small-0", "small-1", "big-0", "one-0"})
        want["c" + std::to_string(c) + "/" + n] = "RUNNING";
    return want;
  }
};

// Lanes: the emulator rejects a second node-pool operation on a busy cluster
// (400 "incompatible operation"); with four clusters applied at once, every
// create goes through on its first try — exactly one POST per pool.
TEST_F(ApplyE2ETest, ClustersRunInParallelAndEachClusterOneOperationAtATime) {
  std::string out;
  ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  EXPECT_NE(out.find("Apply complete: 16 applied, 0 failed, 0 waiting for capacity"),
            std::string::npos)
      << out;
  EXPECT_EQ(Route(kCreateRoute), 16) << emu_->counters().ToJson().dump();
  EXPECT_EQ(LivePools(), AllRunning());
  EXPECT_EQ(Run("plan", "--detailed-exitcode", &out), 0) << out;
}

TEST_F(ApplyE2ETest, StockoutWaitsForCapacityAndRemovesTheErrorPool) {
  // No capacity where the multi-host slices go.
  emu_->SetZoneCapacity("us-east5-a", "tpu-v6e-slice", 0);
  std::string out;
  EXPECT_EQ(Run("apply", kApplyArgs, &out), 3) << out;
  EXPECT_NE(out.find("waiting-for-capacity"), std::string::npos) << out;
  auto live = LivePools();
  for (int c = 0; c < kClusters; ++c) {
    std::string k = "c" + std::to_string(c);
    EXPECT_EQ(live.count(k + "/big-0"), 0u) << "the ERROR pool must be deleted";
    EXPECT_EQ(live[k + "/small-0"], "RUNNING");
    EXPECT_EQ(live[k + "/one-0"], "RUNNING");
  }
  // The stocked-out pools existed (in ERROR) and were deleted, one per cluster.
  EXPECT_EQ(Route(kDeleteRoute), kClusters);
  EXPECT_NE(out.find("Apply complete: 12 applied, 0 failed, 4 waiting for capacity"), std::string::npos) << out;
  // Capacity comes back: the next apply creates what was waiting.
  emu_->SetZoneCapacity("us-east5-a", "tpu-v6e-slice", 100000);
  EXPECT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  EXPECT_EQ(LivePools(), AllRunning());
}

TEST_F(ApplyE2ETest, NonInteractiveDestructivePlanNeedsAutoApprove) {
  std::string out;
  ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  // Dropping the 1-chip pool: a delete, small enough for the mass-delete guard.
  Write("deploy/proj-apply/c0/pools.yaml",
        Pool("small", "2x2", 2) + "---\n" + Pool("big", "4x4", 1, "us-east5-a"));
  EXPECT_EQ(Run("apply", "--poll-initial-ms 20 < /dev/null", &out), 1) << out;
  EXPECT_NE(out.find("rerun with --auto-approve"), std::string::npos) << out;
  EXPECT_EQ(LivePools().count("c0/one-0"), 1u);
  EXPECT_EQ(Route(kDeleteRoute), 0);
}

// Crash safety, 20 seeded trials: each starts from an empty cloud, SIGKILLs
// the apply at a random moment (before, during or after its creates and their
// operations), then reruns it to completion. Every trial ends with live ==
// desired, each pool created exactly once as the emulator recorded it, and
// nothing deleted; a plan afterwards has nothing to do.
TEST_F(ApplyE2ETest, KilledAtRandomMomentsConvergesWithoutDeletingOrDuplicating) {
  std::mt19937 rng(20261122);
  std::uniform_int_distribution<int> moment(30, 700);
  const int kTrials = 20;
  std::map<std::string, int> once;
  for (const auto& [pool, status] : AllRunning()) once[pool] = 1;
  for (int trial = 0; trial < kTrials; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    // An empty cloud with the four clusters, and a fresh record.
    httplib::Client control("127.0.0.1", emu_->port());
    auto reset = control.Post("/sim/reset", R"({"state":true})", "application/json");
    ASSERT_TRUE(reset && reset->status == 200);
    for (int c = 0; c < kClusters; ++c)
      ASSERT_TRUE(emu_->EnsureCluster(kProject, "us-east5", "c" + std::to_string(c)).ok());
    auto stop = control.Post("/sim/record", R"({"file":""})", "application/json");
    ASSERT_TRUE(stop && stop->status == 200);
    std::filesystem::remove(record_);
    auto start = control.Post("/sim/record", json{{"file", record_}}.dump(), "application/json");
    ASSERT_TRUE(start && start->status == 200);

    RunAndKill(moment(rng));
    // Live never holds a pool the repo does not declare.
    for (const auto& [pool, status] : LivePools()) EXPECT_EQ(AllRunning().count(pool), 1u) << pool;
    std::string out;
    ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
    // The rerun may find a pool already created and PROVISIONING (nothing to
    // change, so not awaited); its operation ends on the emulator's clock.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (LivePools() != AllRunning() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(LivePools(), AllRunning());
    EXPECT_EQ(Route(kDeleteRoute), 0) << "a desired pool was deleted";
    EXPECT_EQ(AcceptedPoolCreates(), once) << "each pool created exactly once";
    emu_->ResetCounters();
  }
  std::string out;
  EXPECT_EQ(Run("plan", "--detailed-exitcode", &out), 0) << out;
}

}  // namespace
}  // namespace tpu::apply
