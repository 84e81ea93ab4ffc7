// Cluster spec.demand through the real loader: values, defaults, and
// file:line:col errors for what the schema and the catalog refuse.
#include <gtest/gtest.h>

#include "manifest/fake_tree.h"
#include "manifest/loader.h"

namespace tpu::manifest {
namespace {

std::string Cluster(const std::string& demand) {
  return "apiVersion: tpu-provisioner.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: c1\nspec:\n"
         "  location: us-east5-b\n  demand:\n" + demand;
}

std::vector<std::string> Errors(const Repo& repo) {
  std::vector<std::string> out;
  for (const auto& e : repo.AllErrors()) out.push_back(e.ToString());
  return out;
}

TEST(DemandPolicyDecodeTest, ValuesAndDefaults) {
  FakeTree tree;
  tree.Write("deploy/proj-demand/c1/cluster.yaml",
             Cluster("    accelerators: [v6e, tpu-v5p-slice]\n    topologies: [2x4, 4x4, 2x2x2]\n"
                     "    capacityTypes: [onDemand, spot]\n    maxChips: 256\n    maxChipsPerNamespace: 64\n"
                     "    gracePeriod: 1h30m\n    serviceAccount: nodes@proj.iam.gserviceaccount.com\n"
                     "    nodeLabels: {team: ml}\n"));
  Repo repo = LoadRepo(tree);
  ASSERT_EQ(Errors(repo), std::vector<std::string>{});
  ASSERT_EQ(repo.targets.size(), 1u);
  ASSERT_TRUE(repo.targets[0].policy.demand);
  const DemandPolicy& d = *repo.targets[0].policy.demand;
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.accelerators, (std::vector<std::string>{"tpu-v6e-slice", "tpu-v5p-slice"}));
  EXPECT_EQ(d.topologies, (std::vector<std::string>{"2x4", "4x4", "2x2x2"}));
  EXPECT_EQ(d.capacity_types, (std::vector<CapacityType>{CapacityType::kOnDemand, CapacityType::kSpot}));
  EXPECT_EQ(d.max_chips, 256);
  EXPECT_EQ(d.max_chips_per_namespace, 64);
  EXPECT_EQ(d.grace_period_seconds, 5400);
  EXPECT_EQ(d.service_account, "nodes@proj.iam.gserviceaccount.com");
  EXPECT_EQ(d.node_labels, (StringMap{{"team", "ml"}}));
}

TEST(DemandPolicyDecodeTest, NodeOptions) {
  FakeTree tree;
  tree.Write("deploy/proj-demand/c1/cluster.yaml",
             Cluster("    accelerators: [v6e]\n    maxChips: 16\n"
                     "    allowedServiceAccounts: [a@p.iam.gserviceaccount.com]\n"
                     "    additionalNodeNetworks: [{network: vpc-b, subnetwork: sub-b}]\n"
                     "    tags: [tpu-nodes]\n    maxPodsPerNode: 32\n    secureBoot: false\n"
                     "    secondaryBootDisk: projects/p/global/images/cache\n    diskType: hyperdisk-balanced\n"
                     "    bootDiskKmsKey: projects/k/locations/us/keyRings/r/cryptoKeys/boot\n"
                     "    podLabelsToNodes: [team]\n    tpuResource: example.com/tpu\n"));
  Repo repo = LoadRepo(tree);
  ASSERT_EQ(Errors(repo), std::vector<std::string>{});
  const DemandPolicy& d = *repo.targets[0].policy.demand;
  EXPECT_EQ(d.allowed_service_accounts, std::vector<std::string>{"a@p.iam.gserviceaccount.com"});
  EXPECT_EQ(d.additional_node_networks, (std::vector<std::pair<std::string, std::string>>{{"vpc-b", "sub-b"}}));
  EXPECT_EQ(d.tags, std::vector<std::string>{"tpu-nodes"});
  EXPECT_EQ(d.max_pods_per_node, 32);
  EXPECT_FALSE(d.secure_boot);
  EXPECT_EQ(d.secondary_boot_disk, "projects/p/global/images/cache");
  EXPECT_EQ(d.disk_type, "hyperdisk-balanced");
  EXPECT_EQ(d.boot_disk_kms_key, "projects/k/locations/us/keyRings/r/cryptoKeys/boot");
  EXPECT_EQ(d.pod_labels_to_nodes, std::vector<std::string>{"team"});
  EXPECT_EQ(d.tpu_resource, "example.com/tpu");
}

TEST(DemandPolicyDecodeTest, MinimalPolicyDefaults) {
  FakeTree tree;
  tree.Write("deploy/proj-demand/c1/cluster.yaml", Cluster("    accelerators: [v6e]\n    maxChips: 16\n"));
  Repo repo = LoadRepo(tree);
  ASSERT_EQ(Errors(repo), std::vector<std::string>{});
  const DemandPolicy& d = *repo.targets[0].policy.demand;
  EXPECT_TRUE(d.topologies.empty());
  EXPECT_EQ(d.capacity_types, (std::vector<CapacityType>{CapacityType::kOnDemand}));
  EXPECT_FALSE(d.max_chips_per_namespace);
  EXPECT_EQ(d.grace_period_seconds, 300);
  EXPECT_FALSE(repo.targets[0].policy.kueue);
  // The GKE TPU Provisioner's defaults.
  EXPECT_EQ(d.max_pods_per_node, 15);
  EXPECT_TRUE(d.secure_boot);
  EXPECT_EQ(d.tpu_resource, "google.com/tpu");
}

TEST(DemandPolicyDecodeTest, NoDemandWithoutTheSection) {
  FakeTree tree;
  tree.Write("deploy/proj-demand/c1/cluster.yaml",
             "apiVersion: tpu-provisioner.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: c1\nspec:\n  location: us-east5\n");
  Repo repo = LoadRepo(tree);
  ASSERT_EQ(Errors(repo), std::vector<std::string>{});
  EXPECT_FALSE(repo.targets[0].policy.demand);
}

TEST(DemandPolicyDecodeTest, BadInputIsAnErrorAtItsPlace) {
  struct Case {
    std::string demand;
    std::string error;  // a substring of the one error
  };
  const std::vector<Case> cases = {
      {"    accelerators: [v9z]\n    maxChips: 8\n", "cluster.yaml:8:20: spec.demand.accelerators[0]"},
      {"    accelerators: [v6e]\n    topologies: [2x2x2]\n    maxChips: 8\n",
       "cluster.yaml:9:18: spec.demand.topologies[0]: topology 2x2x2 is not valid for any"},
      {"    accelerators: [v6e]\n", "maxChips"},
      {"    accelerators: [v6e]\n    maxChips: 8\n    capacityTypes: [flex]\n", "spec.demand.capacityTypes"},
      {"    accelerators: [v6e]\n    maxChips: 8\n    gracePeriod: soon\n", "spec.demand.gracePeriod"},
      {"    accelerators: [v6e]\n    maxChips: -1\n", "spec.demand.maxChips"},
      {"    accelerators: [v6e]\n    maxChips: 8\n    surprise: true\n", "surprise"},
      {"    accelerators: [v6e]\n    maxChips: 8\n    maxPodsPerNode: 4\n",
       "cluster.yaml:10:5: spec.demand.maxPodsPerNode: expected 0 (GKE's default) or 8 to 256, got 4"},
      {"    accelerators: [v6e]\n    maxChips: 8\n    bootDiskKmsKey: my-key\n", "spec.demand.bootDiskKmsKey"},
      {"    accelerators: [v6e]\n    maxChips: 8\n    additionalNodeNetworks: [{network: v}]\n",
       "subnetwork"},
  };
  for (const auto& c : cases) {
    FakeTree tree;
    tree.Write("deploy/proj-demand/c1/cluster.yaml", Cluster(c.demand));
    Repo repo = LoadRepo(tree);
    auto errors = Errors(repo);
    ASSERT_FALSE(errors.empty()) << c.demand;
    std::string all;
    for (const auto& e : errors) all += e + "\n";
    EXPECT_NE(all.find(c.error), std::string::npos) << all;
    EXPECT_TRUE(repo.targets.empty() || repo.targets[0].blocked()) << c.demand;
  }
}

}  // namespace
}  // namespace tpu::manifest
