// End to end: the real `tpu-provisioner plan` binary against the cloud
// emulator (GKE + Compute over loopback HTTP), seeded with live state built
// from the same manifests through the wire. Credentials come from a local
// metadata server. Asserts exit codes, the JSON document, and the emulator's
// counters: plan makes no mutating call and at most 4 reads per project.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "cloud/compute_wire.h"
#include "cloud/gke_wire.h"
#include "manifest/disk_tree.h"
#include "manifest/loader.h"
#include "plan/desired.h"
#include "plan/plan_json.h"
#include "metadata_server.h"
#include "sim/cloud_emulator.h"

namespace tpu::plan {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using tpu::test_support::MetadataServer;

struct BinaryRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

constexpr const char* kV5p = R"(apiVersion: tpu-provisioner.io/v1alpha1
kind: TPUNodePool
metadata:
  name: train
spec:
  accelerator: v5p
  topology: 2x2x4
  slices: 4
  location: us-central2-b
  nodeConfig:
    labels:
      team: research
      tier: a
    taints:
      - key: dedicated
        value: train
        effect: NoSchedule
      - key: after
        value: x
        effect: NoExecute
    oauthScopes: [cloud-platform, userinfo.email]
    diskType: pd-balanced
)";

constexpr const char* kV6e = R"(apiVersion: tpu-provisioner.io/v1alpha1
kind: TPUNodePool
metadata:
  name: serve
spec:
  accelerator: tpu-v6e-slice
  topology: 2x2
  nodeCount: 2
  location: us-central2-b
  capacity:
    type: spot
)";

constexpr const char* kCluster = R"(apiVersion: tpu-provisioner.io/v1alpha1
kind: Cluster
metadata:
  name: c
spec:
  location: us-central2
  maxDeletePercent: 50
)";

class PlanE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/plan-e2e-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    repo_ = dir_ + "/repo";
    sim::CloudEmulatorOptions o;
    o.op_latency_ms = {{"default", 0}};
    emu_ = std::make_unique<sim::CloudEmulator>(o);
    ASSERT_TRUE(emu_->Start().ok());
    ASSERT_TRUE(emu_->EnsureCluster("proj-e2e", "us-central2", "c").ok());
    Write("deploy/proj-e2e/c/cluster.yaml", kCluster);
    Write("deploy/proj-e2e/c/train.yaml", kV5p);
    Write("deploy/proj-e2e/c/serve.yaml", kV6e);
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

  // Creates in the emulator, through its GKE create route, every node pool
  // the repo currently declares, as tpu-provisioner would have; `edit` may
  // change a pool before it is created (and return false to skip it).
  void SeedFromRepo(const std::function<bool(cloud::NodePool&)>& edit = nullptr) {
    auto tree = manifest::DiskTree::Open(repo_);
    ASSERT_TRUE(tree.ok());
    manifest::Repo repo = manifest::LoadRepo(**tree);
    ASSERT_TRUE(repo.AllErrors().empty()) << repo.AllErrors()[0].ToString();
    json pools = json::array();
    httplib::Client client("127.0.0.1", emu_->port());
    httplib::Headers auth = {{"Authorization", "Bearer seed"}};
    auto insert = [&](const std::string& path, const json& body) {
      auto r = client.Post(("/compute/v1/projects/proj-e2e/" + path).c_str(), auth, body.dump(), "application/json");
      ASSERT_TRUE(r);
      ASSERT_EQ(r->status, 200) << path << ": " << r->body;
    };
    for (const auto& t : repo.targets) {
      DesiredTarget d = BuildDesired(t);
      // Compute objects first: a tpu7x pool's create checks its workload policy.
      for (const auto& wp : d.policies)
        insert("regions/" + wp.resource.region + "/resourcePolicies", cloud::WorkloadPolicyToJson(wp.resource));
      for (const auto& it : d.templates)
        insert("global/instanceTemplates", cloud::InstanceTemplateToJson(it.resource));
      for (const auto& g : d.groups)
        insert("zones/" + g.resource.zone + "/instanceGroupManagers",
               cloud::InstanceGroupManagerToJson(g.resource));
      for (auto& dp : d.pools) {
        if (edit && !edit(dp.pool)) continue;
        pools.push_back({{"project", t.project},
                         {"location", "us-central2"},
                         {"cluster", t.cluster},
                         {"nodePool", cloud::CreateNodePoolBody(dp.pool)["nodePool"]}});
      }
    }
    auto r = client.Post("/sim/seed", json{{"nodePools", pools}}.dump(), "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    emu_->ResetCounters();
  }

  BinaryRun RunPlan(const std::string& args) {
    emu_->ResetCounters();  // each run is checked on its own
    std::string err_file = dir_ + "/stderr";
    std::string cmd = "env -u GOOGLE_APPLICATION_CREDENTIALS HOME=" + dir_ + " GCE_METADATA_HOST=" +
                      metadata_.host() + " " + TPU_BINARY + " plan --repo " + repo_ + " --gke-endpoint " +
                      emu_->endpoint() + "/ --compute-endpoint " + emu_->endpoint() + "/ " + args + " 2>" +
                      err_file;
    BinaryRun run;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return run;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) run.out.append(buf, n);
    int status = pclose(p);
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream in(err_file);
    run.err.assign(std::istreambuf_iterator<char>(in), {});
    return run;
  }

  json PlanJson(const std::string& args, int want_exit) {
    BinaryRun r = RunPlan("-o json --detailed-exitcode " + args);
    EXPECT_EQ(r.exit_code, want_exit) << r.err << r.out;
    json j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
    return j;
  }

  // "action name" for every non-noop action of target `key`.
  static std::vector<std::string> Steps(const json& plan, const std::string& key) {
    std::vector<std::string> out;
    for (const auto& t : plan["targets"])
      if (t["key"] == key)
        for (const auto& a : t["actions"])
          if (a["action"] != "noop")
            out.push_back(a["action"].get<std::string>() + " " + a["resource"]["name"].get<std::string>());
    return out;
  }
  static const json& Target(const json& plan, const std::string& key) {
    for (const auto& t : plan["targets"])
      if (t["key"] == key) return t;
    static const json none;
    return none;
  }

  void ExpectReadOnly(int projects = 1) {
    sim::CloudCounters c = emu_->counters();
    EXPECT_EQ(c.mutating_calls, 0) << c.ToJson().dump();
    EXPECT_LE(c.calls, 4 * projects) << c.ToJson().dump();
    EXPECT_GE(c.calls, 1);
  }

  std::string dir_, repo_;
  MetadataServer metadata_;
  std::unique_ptr<sim::CloudEmulator> emu_;
};

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
}  // namespace tpu::plan
