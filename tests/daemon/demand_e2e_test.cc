// End-to-end tests of demand-driven pools in `watch` (issue 8): the real
// binary follows a git repository whose Cluster.spec.demand allows v6e
// slices, watches Pods and JobSets in the Kubernetes API emulator through a
// kubeconfig, and creates and deletes node pools in the cloud emulator. No
// kube-scheduler runs here: the tests play the JobSet and Job controllers
// (pods Pending and Unschedulable) and read the emulators. Waits poll with a
// deadline; nothing sleeps.
#include <cstdio>
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "daemon/kube_e2e_fixture.h"
#include "demand/demand_objects.h"
#include "kube/resource.h"
#include "kube/rest_client.h"
#include "sim/kube/api_server.h"

namespace tpu::daemon {
namespace {

using namespace testing;
namespace fs = std::filesystem;
namespace res = kube::resources;
namespace objects = demand::testing;

constexpr const char* kTarget = "tpu-proj/c1";
constexpr const char* kNs = "ml";

std::string DemandClusterYaml(const std::string& grace) {
  return ClusterYaml("c1") +
         "  demand:\n    accelerators: [tpu-v6e-slice]\n    topologies: [2x4]\n    maxChips: 64\n"
         "    gracePeriod: " + grace + "\n";
}

// GKE node pool operations take `pool_ms`; everything else is fast.
sim::CloudEmulatorOptions EmulatorOptions(int pool_ms) {
  sim::CloudEmulatorOptions o = FastEmulatorOptions();
  o.op_latency_ms["CREATE_NODE_POOL"] = pool_ms;
  o.op_latency_ms["DELETE_NODE_POOL"] = 50;
  return o;
}

class DemandE2eTest : public KubeE2eFixture {
 protected:
  explicit DemandE2eTest(int pool_ms = 300) : KubeE2eFixture(EmulatorOptions(pool_ms)) {}

  void SetUp() override {
    KubeE2eFixture::SetUp();
    const kube::ResourceRef namespaces{"", "v1", "namespaces", "Namespace", false};
    ASSERT_TRUE(client_->Create(namespaces, "", {{"apiVersion", "v1"}, {"kind", "Namespace"},
                                                 {"metadata", {{"name", kNs}}}}).ok());
  }

  // A JobSet of `jobs` Jobs whose leader pods wait for a v6e 2x4 slice (2 VMs of 4 chips).
  void CreateJobSet(const std::string& name, int jobs) {
    auto created = client_->Create(res::kJobSets, kNs, objects::JobSetJson(kNs, name, jobs));
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    for (int j = 0; j < jobs; ++j) {
      auto pod = client_->Create(res::kPods, kNs, objects::PodJson(kNs, name, j, 0, "tpu-v6e-slice", "2x4", 4));
      ASSERT_TRUE(pod.ok()) << pod.status().ToString();
      ASSERT_TRUE(client_->MergePatch(res::kPods, kNs, objects::PodName(name, j, 0), objects::UnschedulableStatus(),
                                      "status").ok());
    }
  }

  void SetJobSetCondition(const std::string& name, const std::string& type) {
    json status = {{"status", {{"conditions", {{{"type", type}, {"status", "True"},
                                                {"lastTransitionTime", kube::FormatTime(std::chrono::system_clock::now())}}}}}}};
    ASSERT_TRUE(client_->MergePatch(res::kJobSets, kNs, name, status, "status").ok());
  }

  // Live pools of c1 carrying the workload owner label, by name → status.
  std::map<std::string, std::string> WorkloadPools() {
    std::map<std::string, std::string> out;
    auto live = cloud_.connection().Refresh({kProject});
    if (!live.ok()) return out;
    for (const auto& c : live->projects[kProject].clusters)
      if (c.name == "c1")
        for (const auto& p : c.node_pools)
          if (plan::HasResourceLabel(p, plan::kWorkloadOwnerLabel, plan::kWorkloadOwner)) out[p.name] = p.status;
    return out;
  }

  // POSTs of node pools the emulator received.
  int64_t PoolCreates() {
    auto counters = cloud_.emulator().counters();
    auto it = counters.calls_by_route.find("POST /v1/projects/{project}/locations/{location}/clusters/{cluster}/nodePools");
    return it == counters.calls_by_route.end() ? 0 : it->second;
  }

  // The daemon's cloud API answers with `code` (all methods), from /metrics.
  static int64_t ApiAnswers(DaemonProcess& d, const std::string& code) {
    auto r = d.Get("/metrics");
    if (!r || r->status != 200) return -1;
    int64_t n = 0;
    std::istringstream lines(r->body);
    for (std::string line; std::getline(lines, line);)
      if (line.rfind("tpu_provisioner_api_calls_total{", 0) == 0 && line.find("code=\"" + code + "\"") != std::string::npos)
        n += std::stoll(line.substr(line.rfind(' ') + 1));
    return n;
  }
};

// A 2-slice JobSet gets two workload-owned pools, created in the same lane as
// a git commit's pool (no incompatible-operation answer); /status lists them
// as their own group and `plan` shows them without planning anything for
// them; completion deletes both after the grace period and git's pool stays.
TEST_F(DemandE2eTest, JobSetPoolsShareTheLaneWithGitShowInStatusAndPlanAndGoAfterCompletion) {
  WriteFile(repo_ / "deploy/tpu-proj/c1/cluster.yaml", DemandClusterYaml("2s"));
  CommitAll(repo_, "demand policy");
  auto d = Start({});
  ASSERT_NE(d->Port(), 0) << d->Log();
  ASSERT_TRUE(WaitUntil([&] { return d->Status().value("ready", false); })) << d->Log();

  // The JobSet and a git commit arrive together.
  CreateJobSet("train", 2);
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("git-pool", 1));
  CommitAll(repo_, "a git pool");

  ASSERT_TRUE(WaitUntil([&] {
    auto pools = WorkloadPools();
    return pools.size() == 2 && pools.begin()->second == "RUNNING" && pools.rbegin()->second == "RUNNING";
  })) << d->Log();
  ASSERT_TRUE(WaitUntil([&] { return cloud_.Pools("c1").count("git-pool-0") == 1; })) << d->Log();
  EXPECT_EQ(PoolCreates(), 3) << "one POST per pool";
  EXPECT_EQ(ApiAnswers(*d, "400"), 0) << "git and demand operations never overlapped on c1";

  json status = d->Status()["workloadPools"];
  ASSERT_TRUE(status.is_object()) << d->Status().dump();
  EXPECT_EQ(status["target"], kTarget);
  EXPECT_TRUE(WaitUntil([&] { return d->Status()["workloadPools"]["pools"].size() == 2; })) << d->Status().dump();
  EXPECT_EQ(d->Status()["workloadPools"]["chips"], 16);

  // `plan` (CI's view) lists them apart and plans nothing for them.
  std::string cmd = "env -u GOOGLE_APPLICATION_CREDENTIALS HOME=/nonexistent GCE_METADATA_HOST=" + metadata_.host() +
                    " " + TPU_BINARY + " plan --no-color --repo " + repo_.string() + " --gke-endpoint " +
                    cloud_.emulator().endpoint() + "/ --compute-endpoint " + cloud_.emulator().endpoint() + "/ 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string text;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) text.append(buf, n);
  ASSERT_EQ(pclose(p), 0) << text;
  EXPECT_NE(text.find("Workload-owned node pools"), std::string::npos) << text;
  EXPECT_NE(text.find("2 pools, 16 chips"), std::string::npos) << text;
  EXPECT_NE(text.find("No changes."), std::string::npos) << text;

  // Done: after the grace period both go; git's pool stays.
  SetJobSetCondition("train", "Completed");
  ASSERT_TRUE(WaitUntil([&] { return WorkloadPools().empty(); })) << d->Log();
  EXPECT_EQ(cloud_.Pools("c1").count("git-pool-0"), 1u);
  EXPECT_EQ(ApiAnswers(*d, "400"), 0);
  EXPECT_EQ(d->Log().find("watch failed"), std::string::npos) << d->Log();
  d->Signal(SIGTERM);
  auto exit = d->WaitExit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(WIFEXITED(*exit) && WEXITSTATUS(*exit) == 0) << d->Log();
}

// Slow creates (3 s), so the daemon can be killed while one runs.
class DemandCrashTest : public DemandE2eTest {
 protected:
  DemandCrashTest() : DemandE2eTest(3000) {}
};

// kill -9 while a demand-driven create runs: the restarted daemon finds the
// create in the cloud's operations list, waits for it, and never POSTs twice.
TEST_F(DemandCrashTest, KillNineMidCreateMakesNoDuplicate) {
  WriteFile(repo_ / "deploy/tpu-proj/c1/cluster.yaml", DemandClusterYaml("5m"));
  CommitAll(repo_, "demand policy");
  auto d = Start({}, "first.log");
  ASSERT_NE(d->Port(), 0) << d->Log();
  CreateJobSet("train", 1);
  ASSERT_TRUE(WaitUntil([&] { return PoolCreates() == 1; })) << d->Log();
  auto pools = WorkloadPools();
  ASSERT_EQ(pools.size(), 1u);
  ASSERT_EQ(pools.begin()->second, "PROVISIONING") << "killed mid-create";
  d->Signal(SIGKILL);
  ASSERT_TRUE(d->WaitExit().has_value());

  auto again = Start({}, "second.log");
  ASSERT_NE(again->Port(), 0) << again->Log();
  ASSERT_TRUE(WaitUntil([&] { return again->Status().value("ready", false); })) << again->Log();
  ASSERT_TRUE(WaitUntil([&] {
    auto p = WorkloadPools();
    return p.size() == 1 && p.begin()->second == "RUNNING";
  })) << again->Log();
  // Several passes after the create finished: still one POST.
  ASSERT_TRUE(WaitUntil([&] { return again->Status()["workloadPools"]["pools"].size() == 1; }));
  EXPECT_EQ(PoolCreates(), 1) << again->Log();
  EXPECT_EQ(ApiAnswers(*again, "409"), 0) << "no create of an existing pool";
}

}  // namespace
}  // namespace tpu::daemon
