// End to end (plan_e2e_fixture.h): a clashing unmanaged pool and adoption, the
// mass-delete guard, a vanished target directory, a saved plan and the target
// filter, tpu7x and TPUNodeGroups.
#include "plan/plan_e2e_fixture.h"

namespace tpu::plan::e2e {
namespace {

TEST_F(PlanE2ETest, UnmanagedPoolWithAClashingName) {
  SeedFromRepo([](cloud::NodePool& p) {
    if (p.name == "serve-0") p.resource_labels = cloud::StringMap{{"owner", "someone"}};
    return true;
  });
  json plan = PlanJson("", 1);
  const json& t = Target(plan, "proj-e2e/c");
  EXPECT_EQ(t["status"], "blocked");
  EXPECT_TRUE(t["actions"].empty());
  ASSERT_EQ(t["errors"].size(), 1u);
  EXPECT_NE(t["errors"][0].get<std::string>().find(
                "node pool serve-0 in cluster c already exists and is not managed by tpu-provisioner"),
            std::string::npos)
      << t["errors"][0];

  // With the adopt annotation it becomes an update that adds the markers and
  // nothing else: an adoption, which --detailed-exitcode does not count.
  std::string v6e = kV6e;
  v6e.replace(v6e.find("  name: serve\n"), 14,
              "  name: serve\n  annotations:\n    tpu-provisioner.io/adopt: \"true\"\n");
  Write("deploy/proj-e2e/c/serve.yaml", v6e);
  json adopted = PlanJson("", 0);
  EXPECT_EQ(Steps(adopted, "proj-e2e/c"), std::vector<std::string>{"update serve-0"});
  EXPECT_EQ(adopted["summary"]["adopt"], 1);
  EXPECT_TRUE(adopted["hasChanges"]);
  ExpectReadOnly();
}

TEST_F(PlanE2ETest, MassDeleteIsRefused) {
  SeedFromRepo();
  std::string v5p = kV5p;
  v5p.replace(v5p.find("slices: 4"), 9, "slices: 1");
  Write("deploy/proj-e2e/c/train.yaml", v5p);
  json plan = PlanJson("", 1);
  const json& t = Target(plan, "proj-e2e/c");
  EXPECT_EQ(t["status"], "refused");
  EXPECT_EQ(Steps(plan, "proj-e2e/c"),
            (std::vector<std::string>{"delete train-3", "delete train-2", "delete train-1"}));
  ASSERT_EQ(t["errors"].size(), 1u);
  EXPECT_EQ(t["errors"][0],
            "plan deletes 48 of the 72 chips this target owns (66%), more than maxDeletePercent 50%; rerun "
            "with --allow-mass-delete if that is intended");
  EXPECT_EQ(plan["hasChanges"], false);

  json allowed = PlanJson("--allow-mass-delete", 2);
  EXPECT_EQ(Target(allowed, "proj-e2e/c")["status"], "planned");
  ExpectReadOnly();
}

TEST_F(PlanE2ETest, VanishedTargetDirectory) {
  SeedFromRepo();
  fs::remove_all(fs::path(repo_) / "deploy/proj-e2e/c");
  Write("deploy/proj-e2e/other/cluster.yaml", R"(apiVersion: tpu-provisioner.io/v1alpha1
kind: Cluster
metadata:
  name: other
spec:
  location: us-central2
)");
  ASSERT_TRUE(emu_->EnsureCluster("proj-e2e", "us-central2", "other").ok());
  json plan = PlanJson("", 1);
  const json& t = Target(plan, "proj-e2e/c");
  EXPECT_EQ(t["vanished"], true);
  EXPECT_EQ(t["status"], "refused");
  EXPECT_EQ(Steps(plan, "proj-e2e/c").size(), 5u);
}

TEST_F(PlanE2ETest, SavedPlanRoundTripsAndTargetFilter) {
  SeedFromRepo();
  std::string v6e = kV6e;
  v6e.replace(v6e.find("nodeCount: 2"), 12, "nodeCount: 3");
  Write("deploy/proj-e2e/c/serve.yaml", v6e);
  std::string file = dir_ + "/plan.json";
  BinaryRun r = RunPlan("-out " + file + " --detailed-exitcode");
  EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
  EXPECT_NE(r.out.find("Saved the plan to " + file), std::string::npos);
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  Result<plan::Plan> saved = PlanFromJson(text);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  EXPECT_EQ(PlanToJson(*saved), text);
  EXPECT_EQ(saved->targets.size(), 1u);
  EXPECT_EQ(saved->live_fingerprints.count("proj-e2e"), 1u);

  json none = PlanJson("--target p/elsewhere", 0);
  EXPECT_TRUE(none["targets"].empty());
  BinaryRun bad = RunPlan("--target nonsense");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("expected project/cluster"), std::string::npos);
}

constexpr const char* kV7x = R"(apiVersion: tpu-provisioner.io/v1alpha1
kind: TPUNodePool
metadata:
  name: big
spec:
  accelerator: v7x
  topology: 2x2x2
  slices: 2
  location: us-central2-b
  workloadPolicy: big-wp
)";

std::string Group(const std::string& image) {
  return R"(apiVersion: tpu.google.com/v1alpha1
kind: TPUNodeGroup
metadata:
  name: slice
spec:
  project: proj-e2e
  nodeLocation: us-central2-b
  nodeCount: 2
  topology: 2x2x2
  targetSizePolicyMode: "BULK"
  instanceConfig:
    machineType: tpu7x-standard-4t
    provisioningModel: RESERVATION_BOUND
    reservation: res-e2e
    image: )" + image + "\n";
}

TEST_F(PlanE2ETest, Tpu7xAndNodeGroupInSyncThenTemplateChange) {
  Write("deploy/proj-e2e/c/big.yaml", kV7x);
  Write("deploy/proj-e2e/g/group.yaml", Group("projects/proj-e2e/global/images/a"));
  SeedFromRepo();
  json plan = PlanJson("", 0);
  EXPECT_EQ(plan["hasChanges"], false) << plan.dump(1);
  EXPECT_EQ(Target(plan, "proj-e2e/g")["ownedChips"], 8);
  ExpectReadOnly();

  Write("deploy/proj-e2e/g/group.yaml", Group("projects/proj-e2e/global/images/b"));
  emu_->ResetCounters();
  json changed = PlanJson("", 2);
  std::vector<std::string> steps = Steps(changed, "proj-e2e/g");
  ASSERT_EQ(steps.size(), 3u) << changed.dump(1);
  EXPECT_EQ(steps[0].rfind("create slice-", 0), 0u);
  EXPECT_EQ(steps[1], "replace slice");
  EXPECT_EQ(steps[2].rfind("delete slice-", 0), 0u);
  const json& actions = Target(changed, "proj-e2e/g")["actions"];
  for (const auto& a : actions) {
    if (a["action"] == "delete") {
      EXPECT_EQ(a["dependsOn"], json::array({"instanceGroupManager:proj-e2e/us-central2-b/slice"}));
    }
  }
  ExpectReadOnly();
}

}  // namespace
}  // namespace tpu::plan::e2e
