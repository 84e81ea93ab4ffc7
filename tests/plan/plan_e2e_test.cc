// End to end: the real `tpu-provisioner plan` binary against the cloud
// emulator (plan_e2e_fixture.h). Asserts exit codes, the JSON document, and the
// emulator's counters: plan makes no mutating call and at most 4 reads per
// project. Here: in sync, every kind of change, updates and replaces, a broken
// target beside a healthy one.
#include "plan/plan_e2e_fixture.h"

namespace tpu::plan::e2e {
namespace {

TEST_F(PlanE2ETest, InSyncExitsZeroWithOnlyReads) {
  SeedFromRepo();
  json plan = PlanJson("", 0);
  EXPECT_EQ(plan["hasChanges"], false);
  EXPECT_EQ(plan["hasErrors"], false);
  EXPECT_EQ(plan["summary"]["noop"], 5);
  EXPECT_EQ(Target(plan, "proj-e2e/c")["status"], "planned");
  EXPECT_EQ(Target(plan, "proj-e2e/c")["ownedChips"], 4 * 16 + 2 * 4);
  ExpectReadOnly();

  emu_->ResetCounters();
  BinaryRun text = RunPlan("--detailed-exitcode");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("No changes."), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find('\033'), std::string::npos) << "no colour off a terminal";
  ExpectReadOnly();
}

TEST_F(PlanE2ETest, EveryKindOfChange) {
  SeedFromRepo();
  // update (label), resize (single-host count), replace (placement), delete (a
  // slice), create (a new pool).
  std::string v5p = kV5p;
  v5p.replace(v5p.find("tier: a"), 7, "tier: b");
  v5p.replace(v5p.find("slices: 4"), 9, "slices: 3");
  Write("deploy/proj-e2e/c/train.yaml", v5p);
  std::string v6e = kV6e;
  v6e.replace(v6e.find("nodeCount: 2"), 12, "nodeCount: 3");
  Write("deploy/proj-e2e/c/serve.yaml", v6e);
  Write("deploy/proj-e2e/c/new.yaml", R"(apiVersion: tpu-provisioner.io/v1alpha1
kind: TPUNodePool
metadata:
  name: fresh
spec:
  accelerator: v5e
  topology: 4x4
  location: us-central2-b
)");
  json plan = PlanJson("", 2);
  std::vector<std::string> steps = Steps(plan, "proj-e2e/c");
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.front(), "delete train-3") << "deletes free capacity first";
  std::sort(steps.begin(), steps.end());
  EXPECT_EQ(steps, (std::vector<std::string>{"create fresh-0", "delete train-3", "resize serve-0",
                                             "update train-0", "update train-1", "update train-2"}));
  const json& t = Target(plan, "proj-e2e/c");
  for (const auto& a : t["actions"]) {
    if (a["resource"]["name"] == "train-0") {
      ASSERT_EQ(a["changes"].size(), 1u) << a.dump();
      EXPECT_EQ(a["changes"][0]["path"], "config.labels[\"tier\"]");
      EXPECT_EQ(a["changes"][0]["before"], "\"a\"");
      EXPECT_EQ(a["changes"][0]["after"], "\"b\"");
      EXPECT_EQ(a["updateCalls"], json::array({"updateNodePool"}));
    }
    if (a["resource"]["name"] == "serve-0") {
      EXPECT_EQ(a["changes"][0]["path"], "nodeCount");
      EXPECT_EQ(a["blastRadius"]["chipsCreated"], 4);
    }
    if (a["resource"]["name"] == "train-3") {
      EXPECT_EQ(a["blastRadius"]["chipsDestroyed"], 16);
    }
    if (a["resource"]["name"] == "fresh-0") {
      EXPECT_EQ(a["blastRadius"]["chipsCreated"], 16);
      EXPECT_EQ(a["nodePool"]["placementPolicy"]["type"], "COMPACT");
    }
  }
  EXPECT_EQ(plan["summary"]["create"], 1);
  EXPECT_EQ(plan["summary"]["update"], 4);
  EXPECT_EQ(plan["summary"]["delete"], 1);
  ExpectReadOnly();
}

// UpdateNodePoolRequest migrates the nodes to a new disk size or type: an
// update in place, never a replace that would give the slices' TPUs up.
TEST_F(PlanE2ETest, ADiskChangeIsAnUpdateInPlace) {
  SeedFromRepo();
  std::string v5p = kV5p;
  v5p.replace(v5p.find("diskType: pd-balanced"), 21, "diskType: pd-balanced\n    diskSizeGb: 200");
  Write("deploy/proj-e2e/c/train.yaml", v5p);
  json plan = PlanJson("", 2);
  EXPECT_EQ(Steps(plan, "proj-e2e/c"), (std::vector<std::string>{"update train-0", "update train-1",
                                                           "update train-2", "update train-3"}));
  EXPECT_EQ(plan["summary"]["replace"], 0);
  for (const auto& a : Target(plan, "proj-e2e/c")["actions"]) {
    if (a["resource"]["name"].get<std::string>().rfind("train-", 0) != 0) continue;
    EXPECT_EQ(a["updateCalls"], json::array({"updateNodePool"})) << a.dump();
    EXPECT_EQ(a["nodePool"]["diskSizeGb"], 200);
  }
  ExpectReadOnly();

  BinaryRun text = RunPlan("--no-color");
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("~ nodePool \"train-0\""), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("config.diskSizeGb: 100 → 200"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("-/+"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Plan: 0 to create, 4 to update, 0 to replace, 0 to delete."), std::string::npos);
}

TEST_F(PlanE2ETest, ImmutableFieldIsAReplaceThatSaysWhy) {
  SeedFromRepo();
  std::string v5p = kV5p;
  v5p.replace(v5p.find("  nodeConfig:"), 13, "  capacity:\n    type: spot\n  nodeConfig:");
  Write("deploy/proj-e2e/c/train.yaml", v5p);
  json plan = PlanJson("", 2);
  EXPECT_EQ(Steps(plan, "proj-e2e/c"), (std::vector<std::string>{"replace train-0", "replace train-1",
                                                           "replace train-2", "replace train-3"}));
  EXPECT_EQ(plan["summary"]["replace"], 4);
  ExpectReadOnly();

  BinaryRun text = RunPlan("--no-color");
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("-/+ nodePool \"train-0\"  [-16 chips, -4 hosts, +16 chips, +4 hosts, multi-host]"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("config.spot: false → true  # forces replacement"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(replaced because config.spot cannot change in place (the capacity type is fixed "
                          "when a pool is created); the new pool must obtain its TPU capacity again)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("Plan: 0 to create, 0 to update, 4 to replace, 0 to delete."), std::string::npos);
}

TEST_F(PlanE2ETest, BrokenTargetNextToAHealthyOne) {
  SeedFromRepo();
  ASSERT_TRUE(emu_->EnsureCluster("proj-e2e", "us-central2", "broken").ok());
  Write("deploy/proj-e2e/broken/pool.yaml", R"(apiVersion: tpu-provisioner.io/v1alpha1
kind: TPUNodePool
metadata:
  name: bad
spec:
  accelerator: v5p
  topology: 3x3x3
  location: us-central2-b
)");
  std::string v6e = kV6e;
  v6e.replace(v6e.find("nodeCount: 2"), 12, "nodeCount: 3");
  Write("deploy/proj-e2e/c/serve.yaml", v6e);
  json plan = PlanJson("", 1);
  EXPECT_EQ(Target(plan, "proj-e2e/broken")["status"], "blocked");
  EXPECT_TRUE(Target(plan, "proj-e2e/broken")["actions"].empty());
  ASSERT_FALSE(Target(plan, "proj-e2e/broken")["errors"].empty());
  EXPECT_EQ(Target(plan, "proj-e2e/broken")["errors"][0].get<std::string>().rfind("deploy/proj-e2e/broken/pool.yaml:", 0), 0u)
      << Target(plan, "proj-e2e/broken")["errors"][0];
  EXPECT_EQ(Target(plan, "proj-e2e/c")["status"], "planned");
  EXPECT_EQ(Steps(plan, "proj-e2e/c"), std::vector<std::string>{"resize serve-0"});
  EXPECT_EQ(plan["hasErrors"], true);
  ExpectReadOnly();
}

}  // namespace
}  // namespace tpu::plan::e2e
