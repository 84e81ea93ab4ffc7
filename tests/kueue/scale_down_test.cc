// The scale-down gate against the Kubernetes API emulator: quota is lowered
// first; an admitted workload on the flavor makes the deletion wait (with an
// Event), it proceeds once the workload finishes or the timeout passes; the
// Hold policy holds the ClusterQueue only while waiting.
#include "kueue/scale_down.h"

#include <gtest/gtest.h>

#include "kueue/kueue_test_util.h"

namespace tpu::kueue {
namespace {

namespace testing = kube::testing;

using testing::Pool;

const char* kFlavor = "tpu-v5-lite-podslice-2x4";
const kube::ResourceRef kCQ = kube::resources::kClusterQueues;

class ScaleDownTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.cluster_queue = "tpu-queue";
    config_.scale_down_timeout = std::chrono::minutes(30);
    before_ = testing::Target({Pool("train", "v5e", "2x4", 2, "ct5lp-hightpu-4t")});
    after_ = before_;
    after_.pools[0].slices = 1;
    c_.client->Create({"", "v1", "namespaces", "Namespace", false}, "",
                      {{"metadata", {{"name", "team-a"}}}});
  }
  // A workload admitted to our queue that uses `chips` of kFlavor.
  void AdmitWorkload(const std::string& name, int chips) {
    const kube::ResourceRef wl = kube::resources::kWorkloads;
    json obj = {{"apiVersion", wl.ApiVersion()}, {"kind", "Workload"},
                {"metadata", {{"name", name}, {"namespace", "team-a"}}},
                {"spec", {{"queueName", "lq"}}}};
    ASSERT_TRUE(c_.client->Create(wl, "team-a", obj).ok());
    json status = {{"status",
                    {{"admission",
                      {{"clusterQueue", "tpu-queue"},
                       {"podSetAssignments",
                        {{{"name", "slice"}, {"count", 2}, {"flavors", {{"google.com/tpu", kFlavor}}},
                          {"resourceUsage", {{"google.com/tpu", std::to_string(chips)}}}}}}}},
                     {"conditions", {{{"type", "Admitted"}, {"status", "True"}}}}}}};
    ASSERT_TRUE(c_.client->MergePatch(wl, "team-a", name, status, "status").ok());
  }
  void Finish(const std::string& name) {
    json status = {{"status", {{"conditions", {{{"type", "Admitted"}, {"status", "True"}},
                                               {{"type", "Finished"}, {"status", "True"}}}}}}};
    ASSERT_TRUE(c_.client->MergePatch(kube::resources::kWorkloads, "team-a", name, status, "status").ok());
  }
  std::vector<std::string> EventReasons() {
    std::vector<std::string> out;
    auto events = c_.client->List(kube::resources::kEvents, "default", {});
    for (const auto& e : events->items) {
      out.push_back(e["reason"].get<std::string>() + " x" + std::to_string(e["count"].get<int>()));
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  int64_t Quota() {
    auto cq = c_.client->Get(kCQ, "", "tpu-queue");
    return ParseQuantity((*cq)["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"]);
  }

  testing::Cluster c_;
  FakeEnv clock_;
  KueueConfig config_;
  manifest::Target before_, after_;
};

TEST_F(ScaleDownTest, WaitsForAnAdmittedWorkloadThenProceeds) {
  QuotaSync sync(*c_.client, config_);
  kube::EventRecorder events(*c_.client, clock_);
  ScaleDownGate gate(*c_.client, sync, events, clock_);
  ASSERT_TRUE(sync.Sync(before_).ok());
  EXPECT_EQ(Quota(), 16);
  AdmitWorkload("big-job", 16);

  std::vector<PoolRemoval> removal = {{"train-1", "tpu-v5-lite-podslice", "2x4"}};
  auto v = gate.Check(after_, removal);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->decision, ScaleDownDecision::kWait);
  EXPECT_EQ(Quota(), 8);  // lowered before anything is deleted
  ASSERT_EQ(v->flavors.size(), 1u);
  EXPECT_EQ(v->flavors[0].usage, 16);
  EXPECT_EQ(v->flavors[0].workloads, std::vector<std::string>{"team-a/big-job"});
  EXPECT_EQ(v->message,
            "waiting to delete node pools train-1: tpu-v5-lite-podslice-2x4: 16 chips admitted, quota 8 (1 workloads)");

  clock_.Advance(std::chrono::minutes(5));
  v = gate.Check(after_, removal);
  EXPECT_EQ(v->decision, ScaleDownDecision::kWait);
  EXPECT_EQ(v->waited, std::chrono::minutes(5));
  EXPECT_EQ(EventReasons(), std::vector<std::string>{"ScaleDownWaiting x2"});

  Finish("big-job");
  v = gate.Check(after_, removal);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->decision, ScaleDownDecision::kProceed);
  EXPECT_FALSE(v->timed_out);
  EXPECT_EQ(EventReasons(), (std::vector<std::string>{"ScaleDownProceeding x1", "ScaleDownWaiting x2"}));
}

TEST_F(ScaleDownTest, UsageThatFitsProceedsAtOnce) {
  QuotaSync sync(*c_.client, config_);
  kube::EventRecorder events(*c_.client, clock_);
  ScaleDownGate gate(*c_.client, sync, events, clock_);
  ASSERT_TRUE(sync.Sync(before_).ok());
  AdmitWorkload("small-job", 8);
  auto v = gate.Check(after_, {{"train-1", "tpu-v5-lite-podslice", "2x4"}});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->decision, ScaleDownDecision::kProceed);
}

TEST_F(ScaleDownTest, TimeoutProceedsAnyway) {
  QuotaSync sync(*c_.client, config_);
  kube::EventRecorder events(*c_.client, clock_);
  ScaleDownGate gate(*c_.client, sync, events, clock_);
  ASSERT_TRUE(sync.Sync(before_).ok());
  AdmitWorkload("stuck-job", 16);
  std::vector<PoolRemoval> removal = {{"train-1", "tpu-v5-lite-podslice", "2x4"}};
  EXPECT_EQ(gate.Check(after_, removal)->decision, ScaleDownDecision::kWait);
  clock_.Advance(std::chrono::minutes(30));
  auto v = gate.Check(after_, removal);
  EXPECT_EQ(v->decision, ScaleDownDecision::kProceed);
  EXPECT_TRUE(v->timed_out);
  EXPECT_EQ(EventReasons(), (std::vector<std::string>{"ScaleDownTimeout x1", "ScaleDownWaiting x1"}));
}

TEST_F(ScaleDownTest, HoldPolicyHoldsTheQueueOnlyWhileWaiting) {
  config_.hold = HoldPolicy::kHold;
  QuotaSync sync(*c_.client, config_);
  kube::EventRecorder events(*c_.client, clock_);
  ScaleDownGate gate(*c_.client, sync, events, clock_);
  ASSERT_TRUE(sync.Sync(before_).ok());
  AdmitWorkload("big-job", 16);
  std::vector<PoolRemoval> removal = {{"train-1", "tpu-v5-lite-podslice", "2x4"}};
  ASSERT_EQ(gate.Check(after_, removal)->decision, ScaleDownDecision::kWait);
  EXPECT_EQ((*c_.client->Get(kCQ, "", "tpu-queue"))["spec"]["stopPolicy"], "Hold");
  // A quota sync meanwhile leaves the hold alone (another field manager).
  ASSERT_TRUE(sync.Sync(after_).ok());
  EXPECT_EQ((*c_.client->Get(kCQ, "", "tpu-queue"))["spec"]["stopPolicy"], "Hold");
  Finish("big-job");
  ASSERT_EQ(gate.Check(after_, removal)->decision, ScaleDownDecision::kProceed);
  auto cq = c_.client->Get(kCQ, "", "tpu-queue");
  EXPECT_FALSE((*cq)["spec"].contains("stopPolicy"));
  EXPECT_EQ((*cq)["spec"]["namespaceSelector"], json::object());
}

// A wait given up rather than waited out (a capacity ladder's move, dropped
// for the pass) lets the queue admit again.
TEST_F(ScaleDownTest, AWaitGivenUpReleasesTheHold) {
  config_.hold = HoldPolicy::kHold;
  QuotaSync sync(*c_.client, config_);
  kube::EventRecorder events(*c_.client, clock_);
  ScaleDownGate gate(*c_.client, sync, events, clock_);
  ASSERT_TRUE(sync.Sync(before_).ok());
  AdmitWorkload("big-job", 16);
  std::vector<PoolRemoval> removal = {{"train-1", "tpu-v5-lite-podslice", "2x4"}};
  ASSERT_EQ(gate.Check(after_, removal)->decision, ScaleDownDecision::kWait);
  EXPECT_EQ((*c_.client->Get(kCQ, "", "tpu-queue"))["spec"]["stopPolicy"], "Hold");
  ASSERT_TRUE(gate.ReleaseHold().ok());
  EXPECT_FALSE((*c_.client->Get(kCQ, "", "tpu-queue"))["spec"].contains("stopPolicy"));
  ASSERT_TRUE(gate.ReleaseHold().ok()) << "idempotent";
}

}  // namespace
}  // namespace tpu::kueue
