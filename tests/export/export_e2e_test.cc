// `export` against the cloud emulator over loopback HTTP: pools and a MIG made
// by hand through the GKE and Compute APIs (single-host, multi-host, a
// multislice set, spot, a reservation, a TPUNodeGroup), exported by the real
// binary, then `validate` and `plan` of the files it wrote: no changes.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "cloud/compute_wire.h"
#include "metadata_server.h"
#include "sim/cloud_emulator.h"

namespace tpu::exporter {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kProject = "hand-made";

struct BinaryRun {
  int exit_code = -1;
  std::string out;
};

class ExportE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/export-e2e-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    sim::CloudEmulatorOptions o;
    o.op_latency_ms = {{"default", 0}};
    emu_ = std::make_unique<sim::CloudEmulator>(o);
    ASSERT_TRUE(emu_->Start().ok());
    ASSERT_TRUE(emu_->EnsureCluster(kProject, "us-central2-b", "train").ok());
  }
  void TearDown() override {
    emu_->Stop();
    fs::remove_all(dir_);
  }

  void Post(const std::string& path, const json& body) {
    httplib::Client client("127.0.0.1", emu_->port());
    auto r = client.Post(path.c_str(), {{"Authorization", "Bearer someone"}}, body.dump(), "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << path << ": " << r->body;
  }

  // A node pool as someone would create it with gcloud or the console.
  void CreatePool(const json& pool) {
    Post(std::string("/v1/projects/") + kProject + "/locations/us-central2-b/clusters/train/nodePools",
         json{{"nodePool", pool}});
  }

  static json Pool(const std::string& name, const std::string& machine, int nodes, const std::string& topology = "") {
    json p = {{"name", name}, {"initialNodeCount", nodes}, {"config", {{"machineType", machine}}}};
    if (!topology.empty()) p["placementPolicy"] = {{"type", "COMPACT"}, {"tpuTopology", topology}};
    return p;
  }

  BinaryRun Binary(const std::string& args) {
    std::string cmd = "env -u GOOGLE_APPLICATION_CREDENTIALS -u CLOUDSDK_AUTH_ACCESS_TOKEN_FILE HOME=" + dir_ +
                      " GCE_METADATA_HOST=" + metadata_.host() + " " + TPU_BINARY + " " + args + " 2>&1";
    BinaryRun run;
    FILE* p = popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n;
    while (p && (n = fread(buf, 1, sizeof buf, p)) > 0) run.out.append(buf, n);
    int status = p ? pclose(p) : -1;
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return run;
  }
  std::string Endpoints() const {
    return " --gke-endpoint " + emu_->endpoint() + "/ --compute-endpoint " + emu_->endpoint() + "/";
  }
  std::string Read(const std::string& rel) {
    std::ifstream in(fs::path(dir_) / "repo" / rel);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // Pools made by hand through the emulator's API: single-host, multi-host, a
  // multislice set, spot with labels and taints, a reservation, one whose name
  // a manifest cannot give, and a TPUNodeGroup's template and MIG.
  void SeedHandMadeCapacity() {
    CreatePool(Pool("serve-0", "ct6e-standard-4t", 2));               // single-host, 2 nodes
    CreatePool(Pool("train-0", "ct5p-hightpu-4t", 4, "2x2x4"));      // multi-host
    for (int i = 0; i < 4; ++i) CreatePool(Pool("ms-" + std::to_string(i), "ct6e-standard-4t", 4, "4x4"));  // multislice
    json spot = Pool("spot-0", "ct5lp-hightpu-8t", 1);
    spot["config"]["spot"] = true;
    spot["config"]["labels"] = {{"team", "research"}};
    spot["config"]["taints"] = json::array({{{"key", "dedicated"}, {"value", "ml"}, {"effect", "NO_SCHEDULE"}}});
    CreatePool(spot);
    json resv = Pool("resv-0", "ct5p-hightpu-4t", 1);
    resv["config"]["reservationAffinity"] = {{"consumeReservationType", "SPECIFIC_RESERVATION"},
                                             {"key", "compute.googleapis.com/reservation-name"},
                                             {"values", {"tpu-resv"}}};
    CreatePool(resv);
    CreatePool(Pool("handmade", "ct6e-standard-1t", 1));  // no -<index>: a manifest cannot name it
    // A TPUNodeGroup's parts, made through Compute: a template and a MIG.
    cloud::InstanceTemplate t;
    t.name = "v6e-node-template";
    t.machine_type = "ct6e-standard-4t";
    t.provisioning_model = "STANDARD";
    t.source_image = "projects/cos-cloud/global/images/family/cos-stable";
    t.on_host_maintenance = "TERMINATE";
    Post(std::string("/compute/v1/projects/") + kProject + "/global/instanceTemplates", cloud::InstanceTemplateToJson(t));
    cloud::InstanceGroupManager m;
    m.name = "edge-slice";
    m.zone = "us-central2-b";
    m.instance_template = std::string("projects/") + kProject + "/global/instanceTemplates/v6e-node-template";
    m.base_instance_name = "edge-slice";
    m.target_size = 1;
    m.target_size_policy_mode = "INDIVIDUAL";
    Post(std::string("/compute/v1/projects/") + kProject + "/zones/us-central2-b/instanceGroupManagers",
         cloud::InstanceGroupManagerToJson(m));
  }

  // What export wrote: only what differs from the defaults, adopt on each.
  void ExpectWrittenFiles() {
    std::string ms = Read(std::string("deploy/") + kProject + "/train/ms.yaml");
    EXPECT_NE(ms.find("slices: 4"), std::string::npos) << ms;
    EXPECT_NE(ms.find("tpu-provisioner.io/adopt: \"true\""), std::string::npos) << ms;
    EXPECT_EQ(ms.find("nodeCount"), std::string::npos) << ms;
    EXPECT_EQ(ms.find("diskType"), std::string::npos) << ms;
    EXPECT_EQ(Read(std::string("deploy/") + kProject + "/train/serve.yaml"),
              "apiVersion: tpu-provisioner.io/v1alpha1\nkind: TPUNodePool\nmetadata:\n  name: serve\n"
              "  annotations:\n    tpu-provisioner.io/adopt: \"true\"\nspec:\n  accelerator: tpu-v6e-slice\n"
              "  topology: 2x2\n  nodeCount: 2\n");
    std::string sp = Read(std::string("deploy/") + kProject + "/train/spot.yaml");
    EXPECT_NE(sp.find("type: spot"), std::string::npos) << sp;
    EXPECT_NE(sp.find("effect: NoSchedule"), std::string::npos) << sp;
    EXPECT_NE(Read(std::string("deploy/") + kProject + "/train/resv.yaml").find("reservation: tpu-resv"),
              std::string::npos);
    std::string group = Read(std::string("deploy/") + kProject + "/gce-us-central2-b/edge-slice.tpunodegroup.yaml");
    EXPECT_NE(group.find("kind: TPUNodeGroup"), std::string::npos) << group;
  }

  std::string dir_;
  test_support::MetadataServer metadata_;
  std::unique_ptr<sim::CloudEmulator> emu_;
};

TEST_F(ExportE2ETest, HandMadeCapacityRoundTripsToNoChanges) {
  SeedHandMadeCapacity();
  emu_->ResetCounters();

  const std::string repo = dir_ + "/repo";
  BinaryRun ex = Binary(std::string("export --project ") + kProject + " --out " + repo + Endpoints());
  ASSERT_EQ(ex.exit_code, 0) << ex.out;
  EXPECT_NE(ex.out.find("Exported 5 TPUNodePools (8 node pools) and 1 TPUNodeGroups"), std::string::npos) << ex.out;
  EXPECT_NE(ex.out.find("node pool handmade left out"), std::string::npos) << ex.out;
  EXPECT_NE(ex.out.find("Round trip: planning the exported files against live state finds no changes; the first "
                        "apply adopts 8 unmanaged node pools"),
            std::string::npos) << ex.out;
  EXPECT_EQ(emu_->counters().mutating_calls, 0);

  ExpectWrittenFiles();

  BinaryRun v = Binary("validate --repo " + repo);
  EXPECT_EQ(v.exit_code, 0) << v.out;
  // The plan reports no changes: each hand-made pool is only adopted (its
  // ownership labels written by the next apply), nothing else.
  emu_->ResetCounters();
  BinaryRun text = Binary("plan --detailed-exitcode --repo " + repo + Endpoints());
  EXPECT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find("No changes. Live state matches the manifests. 8 unmanaged resources are adopted by the "
                          "next apply (only their ownership labels are written)."),
            std::string::npos) << text.out;
  BinaryRun p = Binary("plan -o json --detailed-exitcode --repo " + repo + Endpoints());
  EXPECT_EQ(p.exit_code, 0) << p.out;
  auto doc = nlohmann::json::parse(p.out.substr(p.out.find('{')), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << p.out;
  int adopted = 0;
  for (const auto& t : doc["targets"])
    for (const auto& a : t["actions"]) {
      if (a["action"] == "noop") continue;
      EXPECT_EQ(a["action"], "update") << a.dump();
      EXPECT_EQ(a["reason"], "adopt: matches its manifest (unmanaged pool); only the ownership labels are written")
          << a.dump();
      EXPECT_EQ(a["adoptOnly"], true) << a.dump();
      for (const auto& c : a["changes"])
        EXPECT_EQ(c["path"].get<std::string>().rfind("config.resourceLabels[\"tpu-provisioner-", 0), 0u) << a.dump();
      ++adopted;
    }
  EXPECT_EQ(adopted, 8);
  EXPECT_EQ(doc["summary"]["adopt"], 8);
  EXPECT_EQ(doc["summary"]["update"], 0);
  EXPECT_EQ(emu_->counters().mutating_calls, 0);

  // Adopted: the next plan finds no changes.
  BinaryRun a = Binary("apply --auto-approve --repo " + repo + Endpoints());
  ASSERT_EQ(a.exit_code, 0) << a.out;
  BinaryRun again = Binary("plan --detailed-exitcode --repo " + repo + Endpoints());
  EXPECT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find("No changes."), std::string::npos) << again.out;
  // And exporting again now writes the same files without adopt.
  BinaryRun ex2 = Binary(std::string("export --project ") + kProject + " --out " + dir_ + "/again" + Endpoints());
  ASSERT_EQ(ex2.exit_code, 0) << ex2.out;
  EXPECT_NE(ex2.out.find("Round trip: planning the exported files against live state finds no changes."),
            std::string::npos) << ex2.out;
}

TEST_F(ExportE2ETest, OneClusterOnlyAndAnUnknownCluster) {
  CreatePool(Pool("serve-0", "ct6e-standard-4t", 1));
  ASSERT_TRUE(emu_->EnsureCluster(kProject, "us-central2-b", "other").ok());
  const std::string repo = dir_ + "/repo";
  BinaryRun ex = Binary(std::string("export --project ") + kProject + " --cluster train --out " + repo + Endpoints());
  ASSERT_EQ(ex.exit_code, 0) << ex.out;
  EXPECT_TRUE(fs::exists(fs::path(repo) / "deploy" / kProject / "train" / "serve.yaml"));
  EXPECT_FALSE(fs::exists(fs::path(repo) / "deploy" / kProject / "other"));
  BinaryRun bad = Binary(std::string("export --project ") + kProject + " --cluster nope --out " + repo + Endpoints());
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("--cluster nope: no such cluster"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace tpu::exporter
