// Google's own client libraries (the npm packages' REST transport, unmodified)
// work against the emulator: tests/sim/google_clients.js drives GKE and
// Compute through them. Needs node and the packages scripts/setup.sh installs.
#include <cstdlib>
#include <filesystem>

#include "sim_test_util.h"

namespace tpu::sim::testing {
namespace {

// Loading the client libraries takes node several seconds, so this runs in the
// sim_conformance ctest (which sets TPU_SIM_GOOGLE_CLIENTS and records it too),
// keeping the plain sim test run fast.
TEST(GoogleClientLibraries, ContainerAndComputeClientsWorkUnmodified) {
  if (!std::getenv("TPU_SIM_GOOGLE_CLIENTS")) GTEST_SKIP() << "run by ctest -R sim_conformance";
  const std::string src = TPU_SOURCE_DIR;
  ASSERT_TRUE(std::filesystem::exists(src + "/.deps/npm/node_modules/@google-cloud/container"))
      << "run scripts/setup.sh: it installs the Google client libraries into .deps/npm";
  CloudEmulatorOptions o = FastOptions();
  o.op_latency_ms = {{"default", 10}};
  CloudEmulator emu(o);
  ASSERT_TRUE(emu.Start().ok());
  ASSERT_TRUE(emu.EnsureCluster("gp", "us-central1-a", "gc").ok());
  const std::string cmd = "node " + src + "/tests/sim/google_clients.js " + src + " " +
                          std::to_string(emu.port()) + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  EXPECT_GT(emu.counters().mutating_calls, 5);
}

}  // namespace
}  // namespace tpu::sim::testing
