// BuildSlice as tables: shapes from the TPU request (8t vs 1t/4t), labels and
// ownership, capacity, node options, and refusals that say why.
#include "demand/slice_request.h"

#include <gtest/gtest.h>

#include "demand/test_util.h"

namespace tpu::demand {
namespace {

using namespace testing;  // the module's test helpers (test_util.h)

TEST(BuildSliceTest, MachineTypeAndNodeCountFollowTheTpuRequest) {
  struct Case {
    std::string acc, topo;
    int tpu;
    std::string machine_type;
    int nodes, chips;
    std::string placement;  // "" | "COMPACT" | "policy"
  };
  const std::vector<Case> cases = {
      {"tpu-v6e-slice", "2x4", 8, "ct6e-standard-8t", 1, 8, ""},         // one 8-chip VM
      {"tpu-v6e-slice", "2x4", 4, "ct6e-standard-4t", 2, 8, "COMPACT"},  // two 4-chip VMs
      {"tpu-v6e-slice", "1x1", 1, "ct6e-standard-1t", 1, 1, ""},
      {"tpu-v6e-slice", "4x4", 4, "ct6e-standard-4t", 4, 16, "COMPACT"},
      {"tpu-v5-lite-podslice", "2x4", 8, "ct5lp-hightpu-8t", 1, 8, ""},
      {"tpu-v5p-slice", "2x2x4", 4, "ct5p-hightpu-4t", 4, 16, "COMPACT"},
      {"tpu7x", "2x2x4", 4, "tpu7x-standard-4t", 4, 16, "policy"},
  };
  for (const auto& c : cases) {
    auto s = BuildSlice(Policy(), kCluster, Leader("train", kKey, c.acc, c.topo, c.tpu));
    ASSERT_TRUE(s.ok()) << c.acc << " " << c.topo << ": " << s.status().ToString();
    EXPECT_EQ(s->pool.machine_type, c.machine_type) << c.topo;
    EXPECT_EQ(s->pool.node_count, c.nodes) << c.topo;
    EXPECT_EQ(s->chips, c.chips) << c.topo;
    std::string placement = !s->pool.placement_policy ? ""
                            : s->pool.placement_policy->policy_name.empty() ? s->pool.placement_policy->type
                                                                            : "policy";
    EXPECT_EQ(placement, c.placement) << c.acc << " " << c.topo;
    EXPECT_EQ(s->pool.locations, std::vector<std::string>{"us-east5-b"});
    EXPECT_EQ(s->workload_policy.has_value(), c.placement == "policy");
  }
}

TEST(BuildSliceTest, LabelsOwnershipAndCapacity) {
  auto l = Leader("train", kKey, "tpu-v6e-slice", "4x4", 4);
  l.node_selector["team"] = "a";
  l.spot = true;
  manifest::DemandPolicy p = Policy();
  p.service_account = "nodes@proj.iam.gserviceaccount.com";
  p.node_labels = {{"owner", "ml"}};
  auto s = BuildSlice(p, kCluster, l);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->pool.name, "train-0123456789ab");
  EXPECT_TRUE(s->pool.spot);
  EXPECT_EQ(s->pool.service_account, "nodes@proj.iam.gserviceaccount.com");
  EXPECT_EQ(*s->pool.labels, (cloud::StringMap{{"owner", "ml"}, {"team", "a"},
                                                {kNodeJobSetLabel, "train"}, {kNodeNamespaceLabel, "ml"}}));
  EXPECT_EQ(s->pool.resource_labels->count(cloud::kManagedLabel), 0u) << "git must not own it";
  auto owner = WorkloadOwner(s->pool);
  ASSERT_TRUE(owner);
  EXPECT_EQ(owner->Key(), "ml/train");
  EXPECT_EQ(owner->job_key, kKey);
  EXPECT_FALSE(s->pool.management->auto_upgrade);
  // In a release channel auto-upgrade cannot be off: GKE's defaults apply.
  ClusterRef channel = kCluster;
  channel.release_channel = "REGULAR";
  EXPECT_FALSE(BuildSlice(p, channel, l)->pool.management);

  l.spot = false;
  l.reservation = "res-a";
  s = BuildSlice(p, kCluster, l);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->pool.reservation_affinity);
  EXPECT_EQ(s->pool.reservation_affinity->consume_reservation_type, "SPECIFIC_RESERVATION");
  EXPECT_EQ(s->pool.reservation_affinity->values, std::vector<std::string>{"res-a"});
}

TEST(BuildSliceTest, RefusalsSayWhy) {
  manifest::DemandPolicy only_v6e = Policy();
  only_v6e.accelerators = {"tpu-v6e-slice"};
  only_v6e.topologies = {"2x4", "4x4"};
  only_v6e.capacity_types = {manifest::CapacityType::kOnDemand};
  auto spot = Leader("t", kKey, "tpu-v6e-slice", "4x4", 4);
  spot.spot = true;
  struct Case {
    manifest::DemandPolicy policy;
    ClusterRef cluster;
    LeaderPod leader;
    std::string why;
  };
  const std::vector<Case> cases = {
      {only_v6e, kCluster, Leader("t", kKey, "tpu-v5p-slice", "2x2x2", 4), "accelerator tpu-v5p-slice is not allowed"},
      {only_v6e, kCluster, Leader("t", kKey, "tpu-v6e-slice", "8x8", 4), "topology 8x8 is not allowed"},
      {only_v6e, kCluster, spot, "capacity type spot is not allowed"},
      {Policy(), kCluster, Leader("t", kKey, "tpu-v6e-slice", "4x4", 2), "google.com/tpu request 2 matches no v6e machine type"},
      {Policy(), kCluster, Leader("t", kKey, "tpu-v6e-slice", "3x5", 4), "3x5"},
      {Policy(), kCluster, Leader("t", kKey, "tpu-v9", "4x4", 4), "unknown TPU accelerator"},
      {Policy(), {"proj", "us-east5", "c1", ""}, Leader("t", kKey, "tpu-v6e-slice", "4x4", 4), "spec.demand.zone is not set"},
  };
  for (const auto& c : cases) {
    auto s = BuildSlice(c.policy, c.cluster, c.leader);
    ASSERT_FALSE(s.ok()) << c.why;
    EXPECT_NE(s.status().message().find(c.why), std::string::npos) << s.status().message();
  }
}

// Selectors: everything but cloud.google.com/* and google.com/* is copied onto
// the nodes, as the GKE TPU Provisioner does, and ICI resiliency and the
// location hint are kept; kubernetes.io/* is not (the kubelet refuses it).
TEST(BuildSliceTest, SelectorsPassedThroughAsTheOriginalDoes) {
  auto l = Leader("t", kKey, "tpu-v6e-slice", "4x4", 4);
  l.node_selector[kIciResiliencySelector] = "false";
  l.node_selector[kLocationHintSelector] = "cell-a";
  l.node_selector["team"] = "ml";
  l.node_selector["google.com/anything"] = "x";
  l.node_selector["cloud.google.com/gke-nodepool"] = "x";
  l.node_selector["kubernetes.io/os"] = "linux";
  l.node_selector["node.kubernetes.io/instance-type"] = "x";
  auto s = BuildSlice(Policy(), kCluster, l);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const auto& labels = *s->pool.labels;
  EXPECT_EQ(labels.at(kIciResiliencySelector), "false");
  EXPECT_EQ(labels.at(kLocationHintSelector), "cell-a");
  EXPECT_EQ(labels.at("team"), "ml");
  for (const char* k : {"google.com/anything", "cloud.google.com/gke-nodepool", kAcceleratorSelector,
                        kTopologySelector, "kubernetes.io/os", "node.kubernetes.io/instance-type"})
    EXPECT_EQ(labels.count(k), 0u) << k;
  // The selectors are part of the pool's spec: another hint is another pool.
  auto other = l;
  other.node_selector[kLocationHintSelector] = "cell-b";
  EXPECT_NE(BuildSlice(Policy(), kCluster, other)->spec, s->spec);
  other.node_selector[kLocationHintSelector] = "cell-a";
  EXPECT_EQ(BuildSlice(Policy(), kCluster, other)->spec, s->spec);
}

TEST(BuildSliceTest, SharedReservationAndSpotWithReservation) {
  auto l = Leader("t", kKey, "tpu-v6e-slice", "4x4", 4);
  l.reservation = "res-a";
  l.reservation_project = "owner-proj";
  auto s = BuildSlice(Policy(), kCluster, l);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->pool.reservation_affinity->values,
            std::vector<std::string>{"projects/owner-proj/reservations/res-a"});
  l.spot = true;
  auto both = BuildSlice(Policy(), kCluster, l);
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("both spot"), std::string::npos) << both.status().message();
  auto project_only = Leader("t", kKey, "tpu-v6e-slice", "4x4", 4);
  project_only.reservation_project = "owner-proj";
  EXPECT_FALSE(BuildSlice(Policy(), kCluster, project_only).ok());
}

TEST(BuildSliceTest, NodeOptionsFromThePolicyAndThePod) {
  auto policy = Policy();
  policy.service_account = "nodes@p.iam.gserviceaccount.com";
  policy.allowed_service_accounts = {"team-a@p.iam.gserviceaccount.com"};
  policy.additional_node_networks = {{"vpc-b", "sub-b"}};
  policy.tags = {"tpu"};
  policy.secondary_boot_disk = "projects/p/global/images/cache";
  policy.disk_type = "hyperdisk-balanced";
  policy.boot_disk_kms_key = "projects/p/locations/us/keyRings/r/cryptoKeys/k";
  policy.pod_labels_to_nodes = {"team"};
  auto l = Leader("t", kKey, "tpu-v6e-slice", "4x4", 4);
  l.labels = {{"team", "a"}, {"run", "7"}, {"other", "x"}};
  auto s = BuildSlice(policy, kCluster, l);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const auto& p = s->pool;
  EXPECT_EQ(p.service_account, "nodes@p.iam.gserviceaccount.com");
  EXPECT_EQ(p.additional_node_networks, (std::vector<cloud::AdditionalNodeNetwork>{{"vpc-b", "sub-b"}}));
  EXPECT_EQ(p.tags, std::vector<std::string>{"tpu"});
  EXPECT_EQ(p.max_pods_per_node, 15) << "the original's default";
  EXPECT_EQ(p.secure_boot, true) << "the original's default";
  EXPECT_EQ(p.secondary_boot_disks,
            (std::vector<cloud::SecondaryBootDisk>{{"projects/p/global/images/cache", "CONTAINER_IMAGE_CACHE"}}));
  EXPECT_EQ(p.disk_type, "hyperdisk-balanced");
  EXPECT_EQ(p.boot_disk_kms_key, "projects/p/locations/us/keyRings/r/cryptoKeys/k");
  EXPECT_EQ(p.labels->at("team"), "a");
  EXPECT_EQ(p.labels->count("run"), 0u);

  // The pod's annotations, read as the original reads them.
  l.copy_labels = "run, other";
  l.additional_networks = "vpc-c:sub-c, vpc-d : sub-d";
  l.node_service_account = "team-a@p.iam.gserviceaccount.com";
  s = BuildSlice(policy, kCluster, l);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->pool.service_account, "team-a@p.iam.gserviceaccount.com");
  EXPECT_EQ(s->pool.additional_node_networks,
            (std::vector<cloud::AdditionalNodeNetwork>{{"vpc-c", "sub-c"}, {"vpc-d", "sub-d"}}));
  EXPECT_EQ(s->pool.labels->at("run"), "7");
  EXPECT_EQ(s->pool.labels->at("other"), "x");
  l.node_service_account = "admin@p.iam.gserviceaccount.com";
  auto refused = BuildSlice(policy, kCluster, l);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("not in Cluster spec.demand.allowedServiceAccounts"), std::string::npos);
  l.node_service_account.reset();
  l.additional_networks = "vpc-c";
  EXPECT_FALSE(BuildSlice(policy, kCluster, l).ok());

  // Another resource counts as TPU chips; maxPodsPerNode 0 and secureBoot false.
  policy.tpu_resource = "example.com/tpu";
  policy.max_pods_per_node = 0;
  policy.secure_boot = false;
  auto custom = Leader("t", kKey, "tpu-v6e-slice", "4x4", 0);
  custom.requests = {{"example.com/tpu", 4}};
  s = BuildSlice(policy, kCluster, custom);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->pool.machine_type, "ct6e-standard-4t");
  EXPECT_FALSE(s->pool.max_pods_per_node);
  EXPECT_EQ(s->pool.secure_boot, false);
}

}  // namespace
}  // namespace tpu::demand
