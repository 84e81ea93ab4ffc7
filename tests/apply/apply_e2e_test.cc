// End to end: the real `tpu-provisioner apply` against the cloud emulator over
// loopback. The emulator lives in the test process, so it outlives every
// apply — including ones killed with SIGKILL — as the real cloud would.
// Asserts exit codes, what exists in the emulator afterwards, and its counters.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "metadata_server.h"
#include "sim/cloud_emulator.h"

namespace tpu::apply {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using tpu::test_support::MetadataServer;

std::string Pool(const std::string& name, const std::string& topology, int slices,
                 const std::string& zone = "us-east5-b") {
  return "apiVersion: tpu-provisioner.io/v1alpha1\nkind: TPUNodePool\nmetadata:\n  name: " + name +
         "\nspec:\n  accelerator: v6e\n  topology: " + topology + "\n  slices: " +
         std::to_string(slices) + "\n  location: " + zone + "\n";
}

const std::string kPools = Pool("small", "2x2", 2) + "---\n" + Pool("big", "4x4", 1, "us-east5-a") +
                          "---\n" + Pool("one", "1x1", 1);

class ApplyE2ETest : public ::testing::Test {
 protected:
  static constexpr int kClusters = 4;

  void SetUp() override {
    char tmpl[] = "/tmp/apply-e2e-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    repo_ = dir_ + "/repo";
    sim::CloudEmulatorOptions o;
    o.op_latency_ms = {{"default", 60}};
    emu_ = std::make_unique<sim::CloudEmulator>(o);
    ASSERT_TRUE(emu_->Start().ok());
    for (int c = 0; c < kClusters; ++c) {
      std::string cluster = "c" + std::to_string(c);
      ASSERT_TRUE(emu_->EnsureCluster("proj-apply", "us-east5", cluster).ok());
      Write("deploy/proj-apply/" + cluster + "/cluster.yaml",
            "apiVersion: tpu-provisioner.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: " + cluster +
                "\nspec:\n  location: us-east5\n");
      // Single-host pools (one of two slices) in zone b, a multi-host one in zone a: 4 pools.
      Write("deploy/proj-apply/" + cluster + "/pools.yaml", kPools);
    }
  }
  void TearDown() override {
    emu_->Stop();
    fs::remove_all(dir_);
  }

  void Write(const std::string& rel, const std::string& text) {
    fs::path p = fs::path(repo_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }

  std::string Command(const std::string& verb, const std::string& args) const {
    return "env -u GOOGLE_APPLICATION_CREDENTIALS HOME=" + dir_ + " GCE_METADATA_HOST=" +
           metadata_.host() + " " + TPU_BINARY + " " + verb + " --repo " + repo_ +
           " --gke-endpoint " + emu_->endpoint() + "/ --compute-endpoint " + emu_->endpoint() +
           "/ " + args;
  }

  // Runs to completion; returns the exit code, output in `out`.
  int Run(const std::string& verb, const std::string& args, std::string* out = nullptr) {
    std::string cmd = Command(verb, args) + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return -1;
    std::string text;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
    int status = pclose(p);
    if (out) *out = text;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // Starts apply and SIGKILLs it after `ms` milliseconds (or when it ends).
  void RunAndKill(int ms) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::string cmd = "exec " + Command("apply", kApplyArgs) + " >/dev/null 2>&1";
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      if (waitpid(pid, &status, WNOHANG) == pid) return;  // finished before the kill
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }

  // Node pools by "cluster/name" → status, from the emulator's own state, over its API.
  std::map<std::string, std::string> LivePools() {
    httplib::Client client("127.0.0.1", emu_->port());
    httplib::Headers auth = {{"Authorization", "Bearer t"}};
    auto r = client.Get("/v1/projects/proj-apply/locations/-/clusters", auth);
    std::map<std::string, std::string> out;
    if (!r || r->status != 200) return out;
    json j = json::parse(r->body);
    for (const auto& c : j.value("clusters", json::array()))
      for (const auto& p : c.value("nodePools", json::array()))
        out[c["name"].get<std::string>() + "/" + p["name"].get<std::string>()] = p["status"];
    return out;
  }

  std::map<std::string, std::string> AllRunning() const {
    std::map<std::string, std::string> want;
    for (int c = 0; c < kClusters; ++c)
      for (const char* n : {"small-0", "small-1", "big-0", "one-0"})
        want["c" + std::to_string(c) + "/" + n] = "RUNNING";
    return want;
  }

  int64_t Route(const std::string& route) {
    auto counters = emu_->counters();
    auto it = counters.calls_by_route.find(route);
    return it == counters.calls_by_route.end() ? 0 : it->second;
  }

  static constexpr const char* kApplyArgs =
      "--auto-approve --poll-initial-ms 20 --poll-max-ms 100 --parallelism 16";
  static constexpr const char* kCreateRoute =
      "POST /v1/projects/{project}/locations/{location}/clusters/{cluster}/nodePools";
  static constexpr const char* kDeleteRoute =
      "DELETE /v1/projects/{project}/locations/{location}/clusters/{cluster}/nodePools/{nodePool}";

  MetadataServer metadata_;
  std::string dir_, repo_;
  std::unique_ptr<sim::CloudEmulator> emu_;
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

// Crash safety: SIGKILL the apply at seeded random moments, rerun, repeat; a
// final run converges. Nothing desired is ever deleted, nothing is duplicated
// (pool names are unique per cluster, so a second create would have failed
// with 409 and shown up as an error), and the end state is exactly the repo.
TEST_F(ApplyE2ETest, KilledAtRandomMomentsConvergesWithoutDeletingOrDuplicating) {
  std::mt19937 rng(20261122);
  std::uniform_int_distribution<int> moment(30, 700);
  const int kTrials = 20;
  for (int trial = 0; trial < kTrials; ++trial) {
    RunAndKill(moment(rng));
    // Live never holds a pool the repo does not declare.
    for (const auto& [pool, status] : LivePools())
      EXPECT_EQ(AllRunning().count(pool), 1u) << "trial " << trial << ": unexpected " << pool;
  }
  std::string out;
  ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  // A killed run's last operations may still be finishing when this apply finds
  // nothing left to change; wait for them (bounded).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (LivePools() != AllRunning() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(LivePools(), AllRunning());
  EXPECT_EQ(Route(kDeleteRoute), 0) << "a desired pool was deleted";
  EXPECT_GE(Route(kCreateRoute), 16);
  EXPECT_EQ(Run("plan", "--detailed-exitcode", &out), 0) << out;
}

}  // namespace
}  // namespace tpu::apply
