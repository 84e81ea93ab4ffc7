// Test helpers for the daemon: a real git checkout made with the git CLI
// (source/git_fixture.h), the cloud emulator in-process with two clusters, a
// CloudConnection to it, and manifest text builders. Operation latency and
// poll intervals are a few milliseconds so applies finish quickly; nothing
// here sleeps.
#pragma once

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "cloud/cloud.h"
#include "daemon/cloud_port.h"
#include "sim/cloud_emulator.h"
#include "source/git_fixture.h"

namespace tpu::daemon::testing {

using source::testing::CommitAll;
using source::testing::Git;
using source::testing::InitRepo;
using source::testing::TempDir;
using source::testing::WriteFile;

inline constexpr const char* kProject = "tpu-proj";
inline constexpr const char* kZone = "us-central1-a";

inline std::string ClusterYaml(const std::string& name) {
  return "apiVersion: tpu-provisioner.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: " + name +
         "\nspec:\n  location: us-central1-a\n";
}

// A single-host v5e pool (4 chips per slice).
inline std::string PoolYaml(const std::string& name, int slices = 1, const std::string& topology = "2x2") {
  return "apiVersion: tpu-provisioner.io/v1alpha1\nkind: TPUNodePool\nmetadata:\n  name: " + name +
         "\nspec:\n  accelerator: v5e\n  topology: " + topology + "\n  slices: " +
         std::to_string(slices) + "\n  location: us-central1-a\n";
}

inline sim::CloudEmulatorOptions FastEmulatorOptions() {
  sim::CloudEmulatorOptions o;
  o.op_latency_ms = {{"default", 5}};
  return o;
}

inline apply::ExecuteOptions FastExecuteOptions() {
  apply::ExecuteOptions o;
  o.steps.poll.initial = std::chrono::milliseconds(5);
  o.steps.poll.max = std::chrono::milliseconds(20);
  o.steps.retry.base = std::chrono::milliseconds(5);
  o.steps.retry.cap = std::chrono::milliseconds(50);
  return o;
}

// The emulator with clusters tpu-proj/us-central1-a/{c1,c2}, and a connection to it.
class CloudFixture {
 public:
  explicit CloudFixture(sim::CloudEmulatorOptions emulator_options = FastEmulatorOptions())
      : emulator_(std::move(emulator_options)) {
    Status s = emulator_.Start();
    EXPECT_TRUE(s.ok()) << s.ToString();
    for (const char* c : {"c1", "c2"}) EXPECT_TRUE(emulator_.EnsureCluster(kProject, kZone, c).ok());
    cloud::CloudOptions options;
    options.endpoints.container = emulator_.endpoint();
    options.endpoints.compute = emulator_.endpoint();
    options.access_token = "test-token";
    auto conn = cloud::CloudConnection::Open(options);
    EXPECT_TRUE(conn.ok()) << conn.status().ToString();
    if (conn.ok()) connection_ = std::move(conn.value());
  }

  sim::CloudEmulator& emulator() { return emulator_; }
  cloud::CloudConnection& connection() { return *connection_; }

  // Node pool name → node count in `cluster`, as the API reports now.
  std::map<std::string, int> Pools(const std::string& cluster, const std::string& project = kProject) {
    std::map<std::string, int> out;
    auto live = connection_->Refresh({project});
    EXPECT_TRUE(live.ok()) << live.status().ToString();
    if (!live.ok()) return out;
    for (const auto& c : live->projects[project].clusters)
      if (c.name == cluster)
        for (const auto& p : c.node_pools) out[p.name] = p.node_count;
    return out;
  }

 private:
  sim::CloudEmulator emulator_;
  std::unique_ptr<cloud::CloudConnection> connection_;
};

}  // namespace tpu::daemon::testing
