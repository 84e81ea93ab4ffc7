// The state file: written atomically after every change, and read back on
// start, so a restarted emulator loses nothing and finishes operations that
// were in flight when it stopped.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "sim_test_util.h"

namespace tpu::sim::testing {
namespace {

class PersistenceTest : public EmulatorTest {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("tpu-sim-state-" + std::to_string(::getpid()) +
                                                     "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    file_ = (dir_ / "state.json").string();
  }
  void TearDown() override {
    EmulatorTest::TearDown();
    std::filesystem::remove_all(dir_);
  }
  CloudEmulatorOptions WithFile(int latency_ms) {
    CloudEmulatorOptions o = FastOptions();
    o.state_file = file_;
    o.op_latency_ms = {{"default", latency_ms}};
    return o;
  }
  std::filesystem::path dir_;
  std::string file_;
};

TEST_F(PersistenceTest, RestartLosesNothing) {
  StartWith(WithFile(20));
  emu_->SetZoneCapacity("us-central1-a", "tpu-v6e-slice", 32);
  CreatePool(V6ePool("kept"));
  auto pol = http_->Post("/compute/v1/projects/p1/regions/us-central1/resourcePolicies",
                         {{"name", "wp"}, {"workloadPolicy", {{"type", "HIGH_THROUGHPUT"}, {"acceleratorTopology", "2x2x2"}}}});
  ASSERT_EQ(pol.status, 200);
  http_->Post(pol.body["selfLink"].get<std::string>().substr(pol.body["selfLink"].get<std::string>().find("/compute/")) + "/wait");
  json before = http_->Get("/v1/projects/p1/locations/-/clusters").body;
  EXPECT_FALSE(std::filesystem::exists(file_ + ".tmp"));

  StartWith(WithFile(20));  // a new emulator over the same file
  EXPECT_EQ(http_->Get("/v1/projects/p1/locations/-/clusters").body, before);
  EXPECT_EQ(http_->Get("/compute/v1/projects/p1/regions/us-central1/resourcePolicies/wp").status, 200);
  // Capacity in use survived too: 16 of 32 chips are taken, so 32 more stock out.
  EXPECT_TRUE(CreatePool(V6ePool("big", "4x8", 8)).contains("error"));
}

TEST_F(PersistenceTest, OperationsInFlightCompleteAfterRestart) {
  StartWith(WithFile(300));
  auto r = http_->Post(Pools(), {{"nodePool", V6ePool("inflight")}});
  ASSERT_EQ(r.status, 200);
  emu_->Stop();
  StartWith(WithFile(300));
  // The operation is still there, and ends on its original schedule.
  json op = WaitGke(r.body);
  EXPECT_FALSE(op.contains("error"));
  EXPECT_EQ(http_->Get(Pools() + "/inflight").body["status"], "RUNNING");
}

TEST_F(PersistenceTest, CorruptStateFileIsAnError) {
  std::FILE* f = std::fopen(file_.c_str(), "w");
  std::fputs("{not json", f);
  std::fclose(f);
  CloudEmulator emu(WithFile(20));
  EXPECT_FALSE(emu.Start().ok());
}

}  // namespace
}  // namespace tpu::sim::testing
