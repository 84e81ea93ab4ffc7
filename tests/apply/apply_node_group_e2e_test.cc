// End to end: a TPUNodeGroup's Compute objects follow their dependencies —
// workload policy and instance template → managed instance group (which names
// both) on create, MIG → template → policy on delete — each started only after
// the operations of those before it ended, as the emulator's record of every
// exchange shows.
#include <algorithm>

#include "apply_e2e_fixture.h"

namespace tpu::apply {
namespace {

const char* kGroup = R"(apiVersion: tpu.google.com/v1alpha1
kind: TPUNodeGroup
metadata:
  name: slice
spec:
  project: proj-apply
  nodeLocation: us-central1-c
  nodeCount: 2
  topology: 2x2x2
  targetSizePolicyMode: "BULK"
  instanceConfig:
    machineType: tpu7x-standard-4t
    provisioningModel: RESERVATION_BOUND
    reservation: res-apply
    image: projects/ubuntu-os-accelerator-images/global/images/tpu
)";

class ApplyNodeGroupE2ETest : public testing::ApplyE2EBase {
 protected:
  struct Mutation {
    size_t index;           // position in the record
    std::string collection; // resourcePolicies, instanceTemplates, instanceGroupManagers
    std::string operation;  // the operation it started
  };

  // Accepted Compute inserts (POST) or deletes (DELETE), in record order.
  std::vector<Mutation> Mutations(const std::vector<nlohmann::json>& rec, const std::string& method) const {
    std::vector<Mutation> out;
    for (size_t i = 0; i < rec.size(); ++i) {
      const auto& x = rec[i];
      const std::string path = x.value("path", "");
      if (x.value("method", "") != method || x.value("status", 0) != 200 ||
          path.rfind("/compute/v1/", 0) != 0 || path.find("/operations/") != std::string::npos)
        continue;
      for (const char* c : {"resourcePolicies", "instanceTemplates", "instanceGroupManagers"})
        if (path.find(std::string("/") + c) != std::string::npos)
          out.push_back({i, c, x["response"].value("name", "")});
    }
    return out;
  }

  // Index of the first exchange that reports `operation` DONE, or npos.
  static size_t DoneAt(const std::vector<nlohmann::json>& rec, const std::string& operation) {
    for (size_t i = 0; i < rec.size(); ++i) {
      const auto& r = rec[i]["response"];
      if (r.is_object() && r.value("name", "") == operation && r.value("status", "") == "DONE") return i;
    }
    return std::string::npos;
  }

  // Checks `want` order, and that each mutation came after the previous one's operation was DONE.
  void ExpectChain(const std::vector<nlohmann::json>& rec, const std::vector<Mutation>& got,
                   const std::vector<std::string>& want) {
    std::vector<std::string> order;
    for (const auto& m : got) order.push_back(m.collection);
    ASSERT_EQ(order, want);
    for (size_t k = 1; k < got.size(); ++k) {
      size_t done = DoneAt(rec, got[k - 1].operation);
      ASSERT_NE(done, std::string::npos) << got[k - 1].operation << " never seen DONE";
      EXPECT_LT(done, got[k].index) << got[k].collection << " started before " << got[k - 1].collection
                                    << "'s operation ended";
    }
  }
};

TEST_F(ApplyNodeGroupE2ETest, CreateInDependencyOrderAndDeleteInReverse) {
  StartEmulator(/*op_ms=*/80);
  // Self-managed Kubernetes on GCE: no GKE cluster, only Compute objects.
  Write("deploy/proj-apply/gce/cluster.yaml",
        "apiVersion: tpu-provisioner.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: gce\nspec:\n"
        "  location: us-central1-c\n");
  Write("deploy/proj-apply/gce/group.yaml", kGroup);
  std::string out;
  ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  auto rec = Recorded();
  // The template does not name the workload policy (the MIG does): the two
  // may go together; the MIG waits for both.
  auto created = Mutations(rec, "POST");
  ASSERT_EQ(created.size(), 3u);
  std::sort(created.begin(), created.begin() + 2,
            [](const Mutation& a, const Mutation& b) { return a.collection > b.collection; });
  ExpectChain(rec, {created[0], created[2]}, {"resourcePolicies", "instanceGroupManagers"});
  ExpectChain(rec, {created[1], created[2]}, {"instanceTemplates", "instanceGroupManagers"});
  EXPECT_EQ(Run("plan", "--detailed-exitcode", &out), 0) << out;

  // The whole target goes: MIG, then template, then policy.
  Remove("deploy/proj-apply/gce/group.yaml");
  ASSERT_EQ(Run("apply", std::string(kApplyArgs) + " --allow-mass-delete", &out), 0) << out;
  rec = Recorded();
  ExpectChain(rec, Mutations(rec, "DELETE"),
              {"instanceGroupManagers", "instanceTemplates", "resourcePolicies"});
  EXPECT_EQ(Run("plan", "--detailed-exitcode", &out), 0) << out;
}

}  // namespace
}  // namespace tpu::apply
