// End to end: every request the real `tpu-provisioner apply` sends, recorded
// by the emulator, for `example-project/` and for tests/apply/requests (every
// capacity type, single- and multi-host pools fixed and autoscaled, tpu7x with
// a workload policy, a TPUNodeGroup of each mode), checked against the rules
// of docs/emulator.md: the emulator refuses nothing; no management.autoUpgrade
// false goes to a cluster in a release channel; flex-start bodies are
// complete; an autoscaled slice scales 0 ↔ its VMs; the MIG carries the
// workload policy and the template names none; `locations` travels alone. Then
// a disk and a zone change go in place, and a plan finds nothing left to do.
#include <set>

#include "apply_e2e_fixture.h"

namespace tpu::apply {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// VMs of each multi-host slice the test data declares, by node pool name.
const std::map<std::string, int> kSliceVms = {
    {"spot-0", 4}, {"reserved-0", 4}, {"flex-slice-0", 16}, {"zero-slice-0", 4}, {"ironwood-0", 2},
    // example-project
    {"v5e-4x8-0", 8}, {"v6e-spot-0", 4}, {"v6e-spot-1", 4}, {"v6e-reserved-0", 64},
    {"v5p-multislice-0", 4}, {"v5p-multislice-1", 4}, {"v5p-multislice-2", 4},
    {"v5p-multislice-3", 4}, {"v7x-4x4x4-0", 16}, {"v6e-burst-0", 4}, {"v6e-burst-1", 4}};

class ApplyRequestsE2ETest : public testing::ApplyE2EBase {
 protected:
  void UseRepo(const fs::path& source) {
    fs::copy(source, repo_, fs::copy_options::recursive);
  }

  // What the checks saw, for the coverage assertions.
  struct Seen {
    std::set<std::string> capacity;  // onDemand, spot, reservation, flexStart
    int single_host = 0, multi_host = 0, autoscaled_slices = 0, policy_placed = 0;
    int migs_with_policy = 0, templates = 0, policies = 0, location_updates = 0, disk_updates = 0;
  };

  // Every exchange of the record, checked; returns what it covered.
  Seen CheckRecord() {
    Seen seen;
    for (const json& x : Recorded()) {
      const std::string method = x.value("method", ""), path = x.value("path", "");
      SCOPED_TRACE(method + " " + path + " " + x["request"].dump());
      // A shared reservation its owner never made (the emulator has none
      // here) is a 404 the refresh expects and leaves out; nothing else may fail.
      const bool missing_reservation = method == "GET" && path.find("/reservations/") != std::string::npos &&
                                       x.value("status", 0) == 404;
      if (!missing_reservation) {
        EXPECT_LT(x.value("status", 0), 400) << "the emulator refused it: " << x["response"].dump();
      }
      if (method == "POST" && path.ends_with("/nodePools")) CheckPoolCreate(x["request"]["nodePool"], &seen);
      if (method == "POST" && path.ends_with(":setManagement")) {
        EXPECT_TRUE(x["request"]["management"].value("autoUpgrade", false)) << "every cluster here has a channel";
      }
      if (method == "PUT" && path.find("/nodePools/") != std::string::npos) CheckPoolUpdate(x["request"], &seen);
      if (method == "POST" && path.ends_with("/resourcePolicies")) {
        ++seen.policies;
        const json wp = x["request"]["workloadPolicy"];
        EXPECT_EQ(wp.value("type", ""), "HIGH_THROUGHPUT");
        // STATIC, as the tpu-operator sends it: the API's default, AUTO_CONNECT.
        EXPECT_EQ(wp.value("acceleratorTopologyMode", "AUTO_CONNECT"), "AUTO_CONNECT");
      }
      if (method == "POST" && path.ends_with("/instanceTemplates")) {
        ++seen.templates;
        const json props = x["request"]["properties"];
        EXPECT_FALSE(props.contains("resourcePolicies")) << "the workload policy is the MIG's";
        EXPECT_EQ(props["scheduling"].value("onHostMaintenance", ""), "TERMINATE");
      }
      if (method == "POST" && path.ends_with("/instanceGroupManagers")) {
        const json mig = x["request"];
        if (mig["targetSizePolicy"].value("mode", "") == "BULK") {
          EXPECT_TRUE(mig["resourcePolicies"].contains("workloadPolicy")) << mig.dump();
          ++seen.migs_with_policy;
        }
      }
    }
    return seen;
  }

  static void CheckPoolCreate(const json& np, Seen* seen) {
    const std::string name = np.value("name", "");
    const json cfg = np.value("config", json::object());
    // A release channel refuses auto-upgrade off; left out, GKE's default is on.
    if (np.contains("management")) {
      EXPECT_TRUE(np["management"].value("autoUpgrade", false)) << name;
    }
    const json pp = np.value("placementPolicy", json::object());
    const bool multi = kSliceVms.count(name) > 0;
    EXPECT_EQ(multi, pp.contains("tpuTopology") || pp.contains("policyName")) << name;
    multi ? ++seen->multi_host : ++seen->single_host;
    if (pp.contains("policyName")) ++seen->policy_placed;
    const json as = np.value("autoscaling", json::object());
    if (multi && as.value("enabled", false)) {
      ++seen->autoscaled_slices;
      EXPECT_EQ(as.value("minNodeCount", -1), 0) << name;
      EXPECT_EQ(as.value("maxNodeCount", -1), kSliceVms.at(name)) << name;
      EXPECT_EQ(as.value("locationPolicy", ""), "ANY") << name;
      EXPECT_EQ(np.value("initialNodeCount", 0), 0) << name << " starts empty";
    }
    const std::string ra = cfg.value("reservationAffinity", json::object()).value("consumeReservationType", "");
    if (cfg.value("flexStart", false)) {
      seen->capacity.insert("flexStart");
      EXPECT_EQ(ra, "NO_RESERVATION") << name;
      EXPECT_FALSE(cfg.value("spot", false)) << name;
      EXPECT_EQ(np["management"], json({{"autoRepair", false}, {"autoUpgrade", true}})) << name;
      EXPECT_TRUE(as.value("enabled", false)) << name;
      EXPECT_EQ(as.value("minNodeCount", -1), 0) << name;
      EXPECT_EQ(np.value("initialNodeCount", 0), 0) << name;
    } else if (cfg.value("spot", false)) {
      seen->capacity.insert("spot");
    } else if (ra == "SPECIFIC_RESERVATION") {
      seen->capacity.insert("reservation");
    } else {
      seen->capacity.insert("onDemand");
    }
  }

  static void CheckPoolUpdate(const json& body, Seen* seen) {
    if (body.contains("locations")) {
      EXPECT_EQ(body.size(), 1u) << "locations goes in a call of its own";
      ++seen->location_updates;
    }
    if (body.contains("diskSizeGb") || body.contains("diskType")) ++seen->disk_updates;
  }

  int Converged() {
    std::string out;
    int code = Run("plan", "--detailed-exitcode", &out);
    EXPECT_EQ(code, 0) << out;
    return code;
  }
};

TEST_F(ApplyRequestsE2ETest, EveryCapacityTypeAndBothKinds) {
  StartEmulator();
  UseRepo(fs::path(TPU_SOURCE_DIR) / "tests/apply/requests");
  ASSERT_TRUE(emu_->EnsureCluster("proj-req", "us-east5", "train").ok());
  std::string out;
  ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  Seen seen = CheckRecord();
  EXPECT_EQ(seen.capacity, (std::set<std::string>{"onDemand", "spot", "reservation", "flexStart"}));
  EXPECT_EQ(seen.single_host, 2);
  EXPECT_EQ(seen.multi_host, 5);
  EXPECT_EQ(seen.autoscaled_slices, 2) << "flex-slice and zero-slice";
  EXPECT_EQ(seen.policy_placed, 1);
  EXPECT_EQ(seen.policies, 2) << "ironwood's and the bulk group's";
  EXPECT_EQ(seen.templates, 2);
  EXPECT_EQ(seen.migs_with_policy, 1);
  Converged();

  // A disk and a zone change: updates in place, the zones alone.
  std::ifstream in(fs::path(repo_) / "deploy/proj-req/train/pools.yaml");
  std::string pools{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::string before = "  location: us-east5-b\n  nodeConfig:\n    diskSizeGb: 100";
  ASSERT_NE(pools.find(before), std::string::npos);
  pools.replace(pools.find(before), before.size(), "  location: us-east5-c\n  nodeConfig:\n    diskSizeGb: 200");
  Write("deploy/proj-req/train/pools.yaml", pools);
  ASSERT_EQ(Run("plan", "--no-color", &out), 0) << out;
  EXPECT_NE(out.find("~ nodePool \"serve-0\""), std::string::npos) << out;
  EXPECT_EQ(out.find("-/+"), std::string::npos) << "no replace: " << out;
  ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  seen = CheckRecord();
  EXPECT_EQ(seen.location_updates, 1);
  EXPECT_EQ(seen.disk_updates, 1);
  EXPECT_EQ(LivePoolBodies("proj-req")["train/serve-0"]["config"]["diskSizeGb"], 200);
  Converged();
}

TEST_F(ApplyRequestsE2ETest, ExampleProject) {
  StartEmulator();
  UseRepo(fs::path(TPU_SOURCE_DIR) / "example-project");
  ASSERT_TRUE(emu_->EnsureCluster("ml-research-prod", "us-central1", "train-central1").ok());
  ASSERT_TRUE(emu_->EnsureCluster("ml-serving-dev", "us-west4-a", "serve-west4").ok());
  std::string out;
  ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  Seen seen = CheckRecord();
  EXPECT_EQ(seen.capacity, (std::set<std::string>{"onDemand", "spot", "reservation", "flexStart"}));
  EXPECT_EQ(seen.autoscaled_slices, 1) << "v7x-4x4x4, flex-start";
  EXPECT_EQ(seen.policy_placed, 1);
  EXPECT_EQ(seen.migs_with_policy, 1);
  Converged();
}

}  // namespace
}  // namespace tpu::apply
