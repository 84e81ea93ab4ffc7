// End to end: a replace in both strategies, create-before-delete interrupted
// by SIGKILL between its create and its delete, and a resize that the next
// plan sees as done (the pool's size is read from GKE's instance groups).
#include "apply_e2e_fixture.h"

namespace tpu::apply {
namespace {

using testing::Pool;

class ApplyReplaceE2ETest : public testing::ApplyE2EBase {
 protected:
  // One cluster, one single-host v6e pool as one 8-chip VM (2x4); moving it to
  // 1x1 changes the machine type: a replace.
  void Start(const std::string& strategy) {
    StartEmulator();
    AddCluster("c0", strategy.empty() ? "" : "  replaceStrategy: " + strategy + "\n");
    Write("deploy/proj-apply/c0/pools.yaml", Pool("serve", "2x4", 1));
    std::string out;
    ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
    ASSERT_EQ(LivePools(), (std::map<std::string, std::string>{{"c0/serve-0", "RUNNING"}}));
    Write("deploy/proj-apply/c0/pools.yaml", Pool("serve", "1x1", 1));
    // The mass-delete guard does not count replaces, so no --allow-mass-delete.
  }

  // The node pool calls after the first apply: "POST name" / "DELETE name", accepted ones only.
  std::vector<std::string> PoolMutations(size_t skip) const {
    std::vector<std::string> out;
    size_t seen = 0;
    for (const auto& x : Recorded()) {
      const std::string path = x.value("path", "");
      if (x.value("status", 0) != 200 || path.find("/nodePools") == std::string::npos) continue;
      const std::string method = x.value("method", "");
      std::string what;
      if (method == "POST" && path.ends_with("/nodePools")) what = "POST " + x["request"]["nodePool"].value("name", "");
      else if (method == "DELETE") what = "DELETE " + path.substr(path.rfind('/') + 1);
      else continue;
      if (seen++ >= skip) out.push_back(what);
    }
    return out;
  }

  std::string OnlyPoolName() {
    auto live = LivePools();
    EXPECT_EQ(live.size(), 1u);
    return live.empty() ? "" : live.begin()->first.substr(3);
  }
};

TEST_F(ApplyReplaceE2ETest, DeleteBeforeCreateFreesTheCapacityFirstAndKeepsTheName) {
  Start("");
  std::string out;
  ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  EXPECT_EQ(PoolMutations(1), (std::vector<std::string>{"DELETE serve-0", "POST serve-0"}));
  auto live = LivePoolBodies();
  ASSERT_EQ(live.count("c0/serve-0"), 1u);
  EXPECT_EQ(live["c0/serve-0"]["config"]["machineType"], "ct6e-standard-1t");
  EXPECT_EQ(Run("plan", "--detailed-exitcode", &out), 0) << out;
}

TEST_F(ApplyReplaceE2ETest, CreateBeforeDeleteUsesATemporaryNameAndThePlanAfterIsClean) {
  Start("CreateBeforeDelete");
  std::string out;
  ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  std::string name = OnlyPoolName();
  ASSERT_EQ(name.rfind("serve-0-r", 0), 0u) << name;
  EXPECT_EQ(name.size(), std::string("serve-0-r").size() + 8);
  // The new pool existed, RUNNING, before the old one was deleted: its create
  // was accepted first, and the emulator's one-operation-per-cluster rule means
  // the delete started only after the create's operation ended.
  EXPECT_EQ(PoolMutations(1), (std::vector<std::string>{"POST " + name, "DELETE serve-0"}));
  auto live = LivePoolBodies();
  EXPECT_EQ(live["c0/" + name]["config"]["machineType"], "ct6e-standard-1t");
  EXPECT_EQ(live["c0/" + name]["config"]["resourceLabels"]["tpu-provisioner-slot"], "serve-0");
  // No flapping: the next plan has nothing to do, and neither has a second apply.
  EXPECT_EQ(Run("plan", "--detailed-exitcode", &out), 0) << out;
  EXPECT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  EXPECT_EQ(PoolMutations(3), std::vector<std::string>{});
  EXPECT_EQ(OnlyPoolName(), name) << "never renamed back";
}

// SIGKILL between the create and the delete: the pool the killed run created
// is found again (its name is deterministic and it carries the slot label), the
// old one is deleted as superseded, and nothing is created twice.
TEST_F(ApplyReplaceE2ETest, CreateBeforeDeleteKilledBetweenCreateAndDeleteConverges) {
  Start("CreateBeforeDelete");
  emu_->ResetCounters();
  std::string created;
  bool killed = RunAndKillWhen(kApplyArgs, [&] {
    for (const auto& [pool, status] : LivePools())
      if (pool != "c0/serve-0") created = pool.substr(3);
    return !created.empty();
  });
  ASSERT_TRUE(killed) << "the apply ended before its create was seen";
  ASSERT_EQ(created.rfind("serve-0-r", 0), 0u) << created;
  EXPECT_EQ(Route(kDeleteRoute), 0) << "killed before the delete";
  auto between = LivePools();
  EXPECT_EQ(between.size(), 2u) << "old and new both exist";

  std::string out;
  ASSERT_EQ(Run("plan", "", &out), 0) << out;
  EXPECT_NE(out.find("slot serve-0 is filled by " + created), std::string::npos) << out;
  EXPECT_NE(out.find("Plan: 0 to create, 0 to update, 0 to replace, 1 to delete."), std::string::npos) << out;
  ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  EXPECT_EQ(LivePools(), (std::map<std::string, std::string>{{"c0/" + created, "RUNNING"}}));
  EXPECT_EQ(AcceptedPoolCreates(),
            (std::map<std::string, int>{{"c0/serve-0", 1}, {"c0/" + created, 1}}))
      << "each pool created exactly once";
  EXPECT_EQ(Run("plan", "--detailed-exitcode", &out), 0) << out;
}

// GKE keeps initialNodeCount at its create value; the size lives in the
// pool's instance groups, which the refresh reads, so a resize is not planned twice.
TEST_F(ApplyReplaceE2ETest, ResizedPoolPlansNoChanges) {
  StartEmulator();
  AddCluster("c0");
  Write("deploy/proj-apply/c0/pools.yaml", Pool("one", "1x1", 1, "us-east5-b", "  nodeCount: 1\n"));
  std::string out;
  ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  Write("deploy/proj-apply/c0/pools.yaml", Pool("one", "1x1", 1, "us-east5-b", "  nodeCount: 3\n"));
  ASSERT_EQ(Run("plan", "--detailed-exitcode", &out), 2) << out;
  EXPECT_NE(out.find("will be resized in place"), std::string::npos) << out;
  ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  EXPECT_EQ(LivePoolBodies()["c0/one-0"]["initialNodeCount"], 1) << "as in GKE";
  EXPECT_EQ(Run("plan", "--detailed-exitcode", &out), 0) << out;
  EXPECT_EQ(Route("POST /v1/projects/{project}/locations/{location}/clusters/{cluster}/nodePools/{nodePool}:setSize"), 1);
}

}  // namespace
}  // namespace tpu::apply
