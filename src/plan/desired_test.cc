// Desired node pools and Compute objects from manifests.
#include "plan/desired.h"

#include <gtest/gtest.h>

#include "plan/ownership.h"
#include "plan/plan_test_util.h"

namespace tpu::plan {
namespace {

using testing::MakePool;
using testing::MakeTarget;

TEST(DesiredTest, MultiHostCompactPlacementAndMarkers) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("train", "v5p", "2x2x4", 2));
  DesiredTarget d = BuildDesired(t);
  ASSERT_EQ(d.pools.size(), 2u);
  const cloud::NodePool& p = d.pools[1].pool;
  EXPECT_EQ(p.name, "train-1");
  EXPECT_EQ(p.machine_type, "ct5p-hightpu-4t");
  EXPECT_EQ(p.node_count, 4);
  EXPECT_EQ(d.pools[1].chips, 16);
  ASSERT_TRUE(p.placement_policy);
  EXPECT_EQ(*p.placement_policy, (cloud::PlacementPolicy{"COMPACT", "2x2x4", ""}));
  EXPECT_EQ(p.resource_labels->at(cloud::kManagedLabel), "true");
  EXPECT_EQ(p.resource_labels->at(cloud::kTargetHashLabel), TargetHash("p/c"));
  EXPECT_EQ(p.locations, std::vector<std::string>{"us-central2-b"});
  EXPECT_FALSE(p.taints) << "GKE adds the google.com/tpu taint itself";
  EXPECT_TRUE(d.policies.empty());
}

TEST(DesiredTest, SingleHostHasNoPlacement) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("serve", "v6e", "2x4"));
  DesiredTarget d = BuildDesired(t);
  ASSERT_EQ(d.pools.size(), 1u);
  EXPECT_FALSE(d.pools[0].pool.placement_policy);
  EXPECT_EQ(d.pools[0].pool.machine_type, "ct6e-standard-8t");
  EXPECT_FALSE(d.pools[0].multi_host);
}

TEST(DesiredTest, Tpu7xMultiHostUsesWorkloadPolicy) {
  manifest::Target t = MakeTarget();
  t.pools.push_back(MakePool("big", "v7x", "4x4x4", 2));
  DesiredTarget d = BuildDesired(t);
  ASSERT_TRUE(d.pools[0].pool.placement_policy);
  EXPECT_EQ(*d.pools[0].pool.placement_policy, (cloud::PlacementPolicy{"", "", "big-wp"}));
  ASSERT_EQ(d.policies.size(), 1u) << "one policy shared by every slice";
  EXPECT_EQ(d.policies[0].resource.name, "big-wp");
  EXPECT_EQ(d.policies[0].resource.region, "us-central2");
  EXPECT_EQ(d.policies[0].resource.type, "HIGH_THROUGHPUT");
  EXPECT_EQ(d.policies[0].resource.accelerator_topology, "4x4x4");
  auto m = ParseComputeDescription(d.policies[0].resource.description);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->target, "p/c");
  EXPECT_EQ(m->owner, "TPUNodePool/big");
}

TEST(DesiredTest, Capacity) {
  manifest::Target t = MakeTarget();
  auto spot = MakePool("a", "v6e", "2x2");
  spot.capacity.type = manifest::CapacityType::kSpot;
  auto flex = MakePool("b", "v6e", "2x2");
  flex.capacity.type = manifest::CapacityType::kFlexStart;
  flex.autoscaling = manifest::Autoscaling{true, 0, 3};  // as the loader sets it
  auto res = MakePool("c", "v6e", "2x2");
  res.capacity = {manifest::CapacityType::kReservation, "r1", "shared"};
  t.pools = {spot, flex, res};
  DesiredTarget d = BuildDesired(t);
  EXPECT_TRUE(d.pools[0].pool.spot);
  EXPECT_FALSE(d.pools[0].pool.taints) << "GKE adds the spot taint itself";
  // Flex-start: the Dynamic Workload Scheduler's body (xpk, Cluster Toolkit).
  const cloud::NodePool& f = d.pools[1].pool;
  EXPECT_TRUE(f.flex_start);
  EXPECT_FALSE(f.spot);
  ASSERT_TRUE(f.reservation_affinity);
  EXPECT_EQ(f.reservation_affinity->consume_reservation_type, "NO_RESERVATION");
  EXPECT_EQ(f.management, (cloud::NodeManagement{false, true})) << "auto-repair off, auto-upgrade GKE's default";
  EXPECT_EQ(f.autoscaling, (cloud::NodePoolAutoscaling{true, 0, 3, "ANY"}));
  EXPECT_EQ(f.node_count, 0) << "nodes come from the autoscaler";
  EXPECT_FALSE(d.pools[0].pool.management) << "left out: GKE's defaults";
  ASSERT_TRUE(d.pools[2].pool.reservation_affinity);
  EXPECT_EQ(d.pools[2].pool.reservation_affinity->consume_reservation_type, "SPECIFIC_RESERVATION");
  EXPECT_EQ(d.pools[2].pool.reservation_affinity->values,
            std::vector<std::string>{"projects/shared/reservations/r1"});
}

// A multi-host slice with autoscaling is created empty and scales as a whole,
// 0 ↔ its VMs, in whichever zone has them; its chips are possible capacity.
TEST(DesiredTest, AutoscaledSliceStartsEmptyAndScalesAsAWhole) {
  manifest::Target t = MakeTarget();
  auto p = MakePool("train", "v5p", "4x4x4");
  p.autoscaling = manifest::Autoscaling{true, 0, 16};
  t.pools = {p};
  DesiredTarget d = BuildDesired(t);
  EXPECT_EQ(d.pools[0].pool.node_count, 0);
  EXPECT_EQ(d.pools[0].pool.autoscaling, (cloud::NodePoolAutoscaling{true, 0, 16, "ANY"}));
  EXPECT_TRUE(d.pools[0].autoscaled);
  EXPECT_EQ(d.pools[0].chips, 64);
  EXPECT_EQ(d.pools[0].hosts, 16);
  // nodeCount written: it starts whole.
  t.pools[0].node_count_set = true;
  EXPECT_EQ(BuildDesired(t).pools[0].pool.node_count, 16);
}

TEST(DesiredTest, ManagementIsSentOnlyWhenTheManifestSaysSomething) {
  manifest::Target t = MakeTarget();
  auto p = MakePool("a", "v6e", "2x2");
  t.pools = {p};
  EXPECT_FALSE(BuildDesired(t).pools[0].pool.management);
  t.pools[0].management = manifest::Management{false, std::nullopt, {}};
  EXPECT_EQ(BuildDesired(t).pools[0].pool.management, (cloud::NodeManagement{false, true}))
      << "autoUpgrade left out is GKE's default, on";
}

TEST(DesiredTest, TaintsInGkeSpelling) {
  manifest::Target t = MakeTarget();
  auto p = MakePool("a", "v6e", "2x2");
  p.node_config.taints = std::vector<manifest::Taint>{{"k", "v", "NoSchedule"}};
  t.pools = {p};
  EXPECT_EQ(BuildDesired(t).pools[0].pool.taints->at(0).effect, "NO_SCHEDULE");
}

manifest::TPUNodeGroup Group(manifest::TargetSizePolicyMode mode) {
  manifest::TPUNodeGroup g;
  g.name = "slice";
  g.project = "p";
  g.node_location = "us-east5-a";
  g.node_count = 4;
  g.topology = "4x4";
  auto shape = catalog::ResolveShape("v6e", "4x4");
  g.shape = *shape;
  g.target_size_policy_mode = mode;
  manifest::TPUNodeGroup::InstanceConfig ic;
  ic.machine_type = "ct6e-standard-4t";
  ic.image = "projects/p/global/images/img";
  g.instance_config = ic;
  return g;
}

TEST(DesiredTest, NodeGroupPolicyTemplateAndMig) {
  manifest::Target t = MakeTarget();
  t.groups.push_back(Group(manifest::TargetSizePolicyMode::kBulk));
  DesiredTarget d = BuildDesired(t);
  ASSERT_EQ(d.policies.size(), 1u);
  ASSERT_EQ(d.templates.size(), 1u);
  ASSERT_EQ(d.groups.size(), 1u);
  EXPECT_EQ(d.policies[0].resource.region, "us-east5");
  const auto& tmpl = d.templates[0].resource;
  EXPECT_EQ(tmpl.name.rfind("slice-", 0), 0u);
  EXPECT_EQ(tmpl.name.size(), std::string("slice-").size() + 8);
  EXPECT_EQ(tmpl.on_host_maintenance, "TERMINATE") << "TPU VMs cannot live-migrate";
  EXPECT_EQ(d.policies[0].resource.accelerator_topology_mode, "")
      << "STATIC, as the tpu-operator sends it: the API's default, AUTO_CONNECT";
  const auto& mig = d.groups[0].resource;
  EXPECT_EQ(mig.workload_policy, "projects/p/regions/us-east5/resourcePolicies/slice-wp")
      << "the workload policy is the MIG's, not the template's";
  EXPECT_EQ(mig.instance_template, "projects/p/global/instanceTemplates/" + tmpl.name);
  EXPECT_EQ(mig.target_size, 4);
  EXPECT_EQ(mig.target_size_policy_mode, "BULK");
  EXPECT_EQ(d.groups[0].chips, 16);
  EXPECT_TRUE(ParseComputeDescription(mig.description));
}

TEST(DesiredTest, TemplateNameFollowsContent) {
  manifest::Target a = MakeTarget(), b = MakeTarget();
  a.groups.push_back(Group(manifest::TargetSizePolicyMode::kBulk));
  auto g = Group(manifest::TargetSizePolicyMode::kBulk);
  g.instance_config->image = "projects/p/global/images/img2";
  b.groups.push_back(g);
  EXPECT_NE(BuildDesired(a).templates[0].resource.name, BuildDesired(b).templates[0].resource.name);
  EXPECT_EQ(BuildDesired(a).templates[0].resource.name, BuildDesired(a).templates[0].resource.name);
}

TEST(DesiredTest, BringYourOwnTemplate) {
  manifest::Target t = MakeTarget();
  auto g = Group(manifest::TargetSizePolicyMode::kIndividual);
  g.instance_config.reset();
  g.instance_template_uri = "https://www.googleapis.com/compute/v1/projects/p/global/instanceTemplates/mine";
  t.groups.push_back(g);
  DesiredTarget d = BuildDesired(t);
  EXPECT_TRUE(d.templates.empty());
  EXPECT_EQ(d.groups[0].resource.instance_template, "projects/p/global/instanceTemplates/mine");
  EXPECT_EQ(d.groups[0].resource.target_size_policy_mode, "INDIVIDUAL");
}

TEST(DesiredTest, BootstrapKubernetesPutsTheJoinOnTheTemplate) {
  manifest::Target t = MakeTarget();
  auto g = Group(manifest::TargetSizePolicyMode::kBulk);
  t.groups.push_back(g);
  const auto plain = BuildDesired(t).templates[0].resource.metadata;
  EXPECT_FALSE(plain.count("kube-labels")) << "no join asked for, nothing to read it";
  t.groups[0].bootstrap_kubernetes = manifest::TPUNodeGroup::BootstrapKubernetes{"1.33", "10.0.0.2"};
  const auto md = BuildDesired(t).templates[0].resource.metadata;
  EXPECT_EQ(md.at("kube-labels"),
            "cloud.google.com/gke-accelerator-count=4,cloud.google.com/gke-tpu-accelerator=tpu-v6e-slice,"
            "cloud.google.com/gke-tpu-topology=4x4,cloud.google.com/tpu-node-group=slice");
  EXPECT_EQ(md.at("accelerator_topology_id"), "4x4");
  EXPECT_EQ(md.at("kubernetes-control-plane-ip"), "10.0.0.2");
  EXPECT_NE(md.at("startup-script").find("kubeadm"), std::string::npos);
  for (const char* key : kBootstrapMetadataKeys) EXPECT_TRUE(md.count(key)) << key;
}

TEST(DesiredTest, ANewJoinScriptDoesNotRenameTheTemplate) {
  manifest::Target t = MakeTarget();
  t.groups.push_back(Group(manifest::TargetSizePolicyMode::kBulk));
  t.groups[0].bootstrap_kubernetes = manifest::TPUNodeGroup::BootstrapKubernetes{"1.33", "10.0.0.2"};
  auto tmpl = BuildDesired(t).templates[0].resource;
  const std::string name = tmpl.name;
  tmpl.metadata["startup-script"] += "\n# a later version\n";
  EXPECT_EQ(tmpl.name, name);
  // What names it is everything else: a changed label is a new template.
  t.groups[0].topology = "2x4";
  EXPECT_NE(BuildDesired(t).templates[0].resource.name, name);
}

TEST(OwnershipTest, ComputeDescriptionRoundTrip) {
  auto m = ParseComputeDescription(ComputeDescription({"p/c", "TPUNodeGroup/g", true}));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->target, "p/c");
  EXPECT_EQ(m->owner, "TPUNodeGroup/g");
  EXPECT_TRUE(m->prevent_destroy);
  EXPECT_FALSE(ParseComputeDescription("made by hand"));
}

// Words are split on any whitespace, as by `istream >> string`; a later word wins.
TEST(OwnershipTest, ComputeDescriptionWordsSplitOnAnyWhitespace) {
  auto m = ParseComputeDescription("\t note  managed-by=tpu-provisioner\ntarget=a/b\r\vtarget=p/c\fowner=X/y  ");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->target, "p/c");
  EXPECT_EQ(m->owner, "X/y");
  EXPECT_FALSE(m->prevent_destroy);
  EXPECT_FALSE(ParseComputeDescription("managed-by=tpu-provisionerx target=p/c"));
  EXPECT_FALSE(ParseComputeDescription(""));
  EXPECT_FALSE(ParseComputeDescription(" \t "));
}

}  // namespace
}  // namespace tpu::plan
