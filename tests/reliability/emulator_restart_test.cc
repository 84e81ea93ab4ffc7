// The cloud goes away mid-apply and comes back: the emulator, with its state
// file, is stopped while `apply` has operations in flight and started again
// on the same port from that file (operations keep their wall-clock schedule,
// docs/emulator.md). The apply rides it out: connection failures are retried,
// the operations it started are found again, and it converges with no
// duplicate and nothing lost.
#include "reliability/crash_harness.h"

namespace tpu::reliability {
namespace {

TEST(EmulatorRestartTest, ApplyRidesOutARestartWithTheStateFileKept) {
  TempDir tmp;
  const fs::path repo = tmp.path() / "repo";
  const Stage stage = CapacityStages(false)[0];
  for (const auto& [path, text] : stage.files) source::testing::WriteFile(repo / path, text);
  test_support::MetadataServer metadata;

  sim::CloudEmulatorOptions o;
  o.state_file = (tmp.path() / "cloud.json").string();
  o.op_latency_ms = {{"default", 50}, {"CREATE_NODE_POOL", 400}};
  auto emu = std::make_unique<sim::CloudEmulator>(o);
  ASSERT_TRUE(emu->Start().ok());
  ASSERT_TRUE(emu->EnsureCluster(kProject, kGkeRegion, "gke").ok());
  const std::string endpoint = emu->endpoint();
  o.port = emu->port();

  BinaryProcess apply({"apply", "--repo", repo.string(), "--auto-approve", "--poll-initial-ms", "20",
                       "--poll-max-ms", "100", "--gke-endpoint", endpoint + "/", "--compute-endpoint",
                       endpoint + "/"},
                      ChildEnvironment(metadata.host()), tmp.path() / "apply.log");
  // Mid-apply: a node pool is being created.
  ASSERT_TRUE(WaitUntil([&] { return RunningOperations(*emu) > 0 && Inventory(*emu).count("gke:gke/a-0"); }))
      << apply.Output();
  emu->Stop();
  emu.reset();
  EXPECT_FALSE(apply.Done()) << "apply ended while the cloud was down\n" << apply.Output();

  emu = std::make_unique<sim::CloudEmulator>(o);
  ASSERT_TRUE(emu->Start().ok());
  EXPECT_EQ(emu->port(), o.port);
  EXPECT_EQ(apply.Wait(), 0) << apply.Output();
  ASSERT_TRUE(WaitUntil([&] { return RunningOperations(*emu) == 0; }));
  std::map<std::string, int> named;
  for (const auto& [key, size] : Inventory(*emu))
    if (key.rfind("template:", 0) != 0 && key.rfind("policy:", 0) != 0) named[key] = size;
  EXPECT_EQ(named, stage.pools);
  // Every pool created once: a second create of the same name would be a 409
  // and a failed action, and the apply exited 0.
  BinaryProcess plan({"plan", "--repo", repo.string(), "--detailed-exitcode", "--gke-endpoint", endpoint + "/",
                      "--compute-endpoint", endpoint + "/"},
                     ChildEnvironment(metadata.host()), tmp.path() / "plan.log");
  EXPECT_EQ(plan.Wait(), 0) << plan.Output();
}

}  // namespace
}  // namespace tpu::reliability
