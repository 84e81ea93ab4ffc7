// BuildSlice and Decide as tables: shapes from the TPU request (8t vs 1t/4t),
// policy refusals, the chip limits, ERROR collection, grace periods across
// JobSet restarts and deletions, and what a restart of the daemon sees.
#include "demand/decide.h"

#include <gtest/gtest.h>

#include "demand/names.h"

namespace tpu::demand {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

const std::string kKey = "0123456789abcdef0123456789abcdef01234567";

manifest::DemandPolicy Policy() {
  manifest::DemandPolicy p;
  p.accelerators = {"tpu-v6e-slice", "tpu-v5p-slice", "tpu7x", "tpu-v5-lite-podslice"};
  p.capacity_types = {manifest::CapacityType::kOnDemand, manifest::CapacityType::kSpot,
                      manifest::CapacityType::kReservation};
  p.max_chips = 256;
  p.grace_period_seconds = 300;
  return p;
}

const ClusterRef kCluster{"proj", "us-east5-b", "c1", ""};

LeaderPod Leader(const std::string& jobset, const std::string& key, const std::string& acc,
                 const std::string& topo, int tpu, const std::string& ns = "ml") {
  LeaderPod l;
  l.ns = ns;
  l.name = jobset + "-" + key.substr(0, 4) + "-0";
  l.jobset = jobset;
  l.job_key = key;
  l.accelerator = acc;
  l.topology = topo;
  l.tpu_request = tpu;
  l.requests[kTpuResource] = tpu;
  l.node_selector = {{kAcceleratorSelector, acc}, {kTopologySelector, topo}};
  return l;
}

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

// A live demand-driven pool of `jobset`'s job `key`.
cloud::NodePool LivePool(const std::string& jobset, const std::string& key, const std::string& status,
                         int nodes = 4, const std::string& ns = "ml") {
  auto s = BuildSlice(Policy(), kCluster, Leader(jobset, key, "tpu-v6e-slice", "4x4", 4, ns));
  cloud::NodePool p = s->pool;
  p.node_count = nodes;
  p.status = status;
  return p;
}

JobSetState Js(const std::string& name, bool finished = false, TimePoint at = {}) {
  JobSetState s;
  s.ns = "ml";
  s.name = name;
  s.finished = finished;
  s.outcome = finished ? "completed" : "";
  s.finished_at = at;
  return s;
}

DemandInputs Inputs(const manifest::DemandPolicy* policy) {
  DemandInputs in;
  in.policy = policy;
  in.cluster = kCluster;
  in.jobsets_synced = true;
  in.now = TimePoint(seconds(1'800'000'000));
  return in;
}

std::vector<std::string> Summary(const Decision& d) {
  std::vector<std::string> out;
  for (const auto& a : d.actions)
    out.push_back(std::string(plan::ActionKindName(a.kind)) + " " + a.resource.name);
  return out;
}

const std::string kKey2 = "fedcba9876543210fedcba9876543210fedcba98";

TEST(DecideTest, TwoSliceJobSetGetsTwoPools) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.jobsets["ml/train"] = Js("train");
  in.leaders = {Leader("train", kKey, "tpu-v6e-slice", "4x4", 4), Leader("train", kKey2, "tpu-v6e-slice", "4x4", 4)};
  Decision d = Decide(in);
  EXPECT_EQ(Summary(d), (std::vector<std::string>{"create train-0123456789ab", "create train-fedcba987654"}));
  for (const auto& a : d.actions) {
    EXPECT_EQ(a.target, "proj/c1 (demand)");
    EXPECT_EQ(a.resource.Id(), "nodePool:proj/us-east5-b/c1/" + a.resource.name);
    EXPECT_EQ(a.blast.chips_created, 16);
    ASSERT_TRUE(a.node_pool);
  }
  EXPECT_TRUE(d.refusals.empty());
  EXPECT_EQ(d.chips_in_use, 32);
}

TEST(DecideTest, NoCreateWhenThePoolExistsOrItsOperationRuns) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.jobsets["ml/train"] = Js("train");
  in.leaders = {Leader("train", kKey, "tpu-v6e-slice", "4x4", 4), Leader("train", kKey2, "tpu-v6e-slice", "4x4", 4)};
  in.live_pools = {LivePool("train", kKey, "PROVISIONING")};
  in.busy_pools = {PoolName("train", kKey2)};  // a create a killed daemon started
  EXPECT_EQ(Summary(Decide(in)), std::vector<std::string>{});
}

TEST(DecideTest, ChipLimitsRefuseWithAReason) {
  auto policy = Policy();
  policy.max_chips = 60;
  policy.max_chips_per_namespace = 16;
  auto in = Inputs(&policy);
  in.jobsets["ml/train"] = Js("train");
  in.live_pools = {LivePool("other", kKey2, "RUNNING", 4, "team-b")};  // 16 chips in team-b
  in.leaders = {Leader("train", kKey, "tpu-v6e-slice", "4x4", 4),
                Leader("train", "aaaa" + kKey.substr(4), "tpu-v6e-slice", "4x4", 4),
                Leader("big", kKey, "tpu-v6e-slice", "4x8", 4, "team-c")};
  Decision d = Decide(in);
  EXPECT_EQ(Summary(d), std::vector<std::string>{"create train-0123456789ab"});
  ASSERT_EQ(d.refusals.size(), 2u);
  std::map<std::string, std::string> why;
  for (const auto& r : d.refusals) why[r.pod.jobset + "/" + r.pod.job_key.substr(0, 4)] = r.reason;
  EXPECT_NE(why["big/0123"].find("to 64 chips, over Cluster spec.demand.maxChips 60"), std::string::npos) << why["big/0123"];
  EXPECT_NE(why["train/aaaa"].find("namespace ml to 32 chips, over Cluster spec.demand.maxChipsPerNamespace 16"),
            std::string::npos)
      << why["train/aaaa"];
}

TEST(DecideTest, DisabledNoPolicyAndOptOut) {
  auto off = Policy();
  off.enabled = false;
  auto in = Inputs(&off);
  in.leaders = {Leader("train", kKey, "tpu-v6e-slice", "4x4", 4)};
  Decision d = Decide(in);
  EXPECT_TRUE(d.actions.empty());
  ASSERT_EQ(d.refusals.size(), 1u);
  EXPECT_NE(d.refusals[0].reason.find("disabled"), std::string::npos);

  auto none = Inputs(nullptr);
  none.leaders = in.leaders;
  d = Decide(none);
  EXPECT_TRUE(d.actions.empty());
  EXPECT_TRUE(d.refusals.empty()) << "a cluster without spec.demand says nothing";

  auto policy = Policy();
  auto opt = Inputs(&policy);
  opt.leaders = in.leaders;
  opt.leaders[0].opted_out = true;
  d = Decide(opt);
  EXPECT_TRUE(d.actions.empty());
  EXPECT_TRUE(d.refusals.empty());
}

TEST(DecideTest, ErrorPoolIsCollectedThenRecreated) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.jobsets["ml/train"] = Js("train");
  in.leaders = {Leader("train", kKey, "tpu-v6e-slice", "4x4", 4)};
  in.live_pools = {LivePool("train", kKey, "ERROR")};
  Decision d = Decide(in);
  EXPECT_EQ(Summary(d), std::vector<std::string>{"delete train-0123456789ab"});
  EXPECT_NE(d.actions[0].reason.find("ERROR"), std::string::npos);
  in.live_pools.clear();  // the next pass, after the delete
  EXPECT_EQ(Summary(Decide(in)), std::vector<std::string>{"create train-0123456789ab"});
  in.retry_after[PoolName("train", kKey)] = in.now + seconds(30);  // after a stockout
  d = Decide(in);
  EXPECT_TRUE(d.actions.empty());
  EXPECT_EQ(d.next_due, in.now + seconds(30));
}

TEST(DecideTest, GracePeriodFromTheJobSetsConditionTime) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.live_pools = {LivePool("train", kKey, "RUNNING"), LivePool("train", kKey2, "RUNNING")};
  in.jobsets["ml/train"] = Js("train", true, in.now - minutes(2));
  Decision d = Decide(in);
  EXPECT_TRUE(d.actions.empty());
  EXPECT_EQ(d.next_due, in.now + minutes(3));
  in.jobsets["ml/train"] = Js("train", true, in.now - minutes(5));
  d = Decide(in);
  EXPECT_EQ(Summary(d), (std::vector<std::string>{"delete train-0123456789ab", "delete train-fedcba987654"}));
  EXPECT_NE(d.actions[0].reason.find("completed (grace period 5m over)"), std::string::npos) << d.actions[0].reason;
  EXPECT_EQ(d.actions[0].blast.chips_destroyed, 16);
}

TEST(DecideTest, RestartingJobSetKeepsItsPools) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.live_pools = {LivePool("train", kKey, "RUNNING")};
  JobSetState restarting = Js("train");
  restarting.restarts = 3;
  in.jobsets["ml/train"] = restarting;
  // The restarted Job's leader waits again, with the same job key: same pool.
  in.leaders = {Leader("train", kKey, "tpu-v6e-slice", "4x4", 4)};
  in.gone_since[PoolName("train", kKey)] = in.now - minutes(60);  // seen gone once, back now
  Decision d = Decide(in);
  EXPECT_TRUE(d.actions.empty());
  EXPECT_TRUE(d.gone_since.empty()) << "the JobSet is back: the clock starts over";
}

TEST(DecideTest, DeletedJobSetCountsFromWhenItWasFirstSeenGone) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.live_pools = {LivePool("train", kKey, "RUNNING")};
  Decision d = Decide(in);  // no JobSet at all
  EXPECT_TRUE(d.actions.empty());
  ASSERT_EQ(d.gone_since.size(), 1u);
  EXPECT_EQ(d.gone_since.begin()->second, in.now);
  in.gone_since = d.gone_since;
  in.now += minutes(5);
  d = Decide(in);
  EXPECT_EQ(Summary(d), std::vector<std::string>{"delete train-0123456789ab"});
  EXPECT_NE(d.actions[0].reason.find("deleted"), std::string::npos);
}

TEST(DecideTest, NothingIsDeletedBeforeTheJobSetListIsRead) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.jobsets_synced = false;
  in.live_pools = {LivePool("train", kKey, "RUNNING")};
  in.gone_since[PoolName("train", kKey)] = in.now - minutes(60);
  EXPECT_TRUE(Decide(in).actions.empty());
}

TEST(DecideTest, GitOwnedAndForeignPoolsAreNotTouched) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  cloud::NodePool git;
  git.name = "train-0";
  git.status = "ERROR";
  git.resource_labels = cloud::StringMap{{cloud::kManagedLabel, "true"}};
  cloud::NodePool other;
  other.name = "default-pool";
  other.status = "RUNNING";
  in.live_pools = {git, other};
  Decision d = Decide(in);
  EXPECT_TRUE(d.actions.empty());
  EXPECT_TRUE(d.pools.empty());
}

TEST(DecideTest, DeletesComeBeforeCreatesAndFreeTheirChips) {
  auto policy = Policy();
  policy.max_chips = 16;
  auto in = Inputs(&policy);
  in.live_pools = {LivePool("old", kKey, "RUNNING")};
  in.jobsets["ml/old"] = Js("old", true, in.now - minutes(10));
  in.jobsets["ml/train"] = Js("train");
  in.leaders = {Leader("train", kKey2, "tpu-v6e-slice", "4x4", 4)};
  EXPECT_EQ(Summary(Decide(in)),
            (std::vector<std::string>{"delete old-0123456789ab", "create train-fedcba987654"}));
}

TEST(DecideTest, V7xGetsItsWorkloadPolicyFirstAndLosesItAfter) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.jobsets["ml/train"] = Js("train");
  in.leaders = {Leader("train", kKey, "tpu7x", "2x2x4", 4)};
  Decision d = Decide(in);
  ASSERT_EQ(d.actions.size(), 2u);
  EXPECT_EQ(d.actions[0].resource.kind, plan::ResourceKind::kWorkloadPolicy);
  EXPECT_EQ(d.actions[0].resource.location, "us-east5");
  EXPECT_EQ(d.actions[1].depends_on, std::vector<std::string>{d.actions[0].resource.Id()});

  cloud::NodePool live = *d.actions[1].node_pool;
  live.status = "RUNNING";
  cloud::WorkloadPolicy wp = *d.actions[0].workload_policy;
  in.live_pools = {live};
  in.live_policies = {wp};
  in.leaders.clear();
  in.jobsets["ml/train"] = Js("train", true, in.now - minutes(6));
  d = Decide(in);
  ASSERT_EQ(Summary(d), (std::vector<std::string>{"delete train-0123456789ab", "delete train-0123456789ab-wp"}));
  EXPECT_EQ(d.actions[1].depends_on, std::vector<std::string>{d.actions[0].resource.Id()});
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

// A pool the GKE TPU Provisioner made: its node labels, its name.
cloud::NodePool OriginalPool(const std::string& jobset, const std::string& key, const std::string& ns,
                             const std::string& status = "RUNNING") {
  cloud::NodePool p;
  p.name = CompatPoolName(jobset, key);
  p.machine_type = "ct6e-standard-4t";
  p.node_count = 4;
  p.status = status;
  p.placement_policy = cloud::PlacementPolicy{"COMPACT", "4x4", ""};
  p.labels = cloud::StringMap{{kCompatManagerLabel, kCompatManagerValue}, {kCompatJobSetLabel, jobset},
                              {kCompatNamespaceLabel, ns},
                              {"google.com/tpu-provisioner-nodepool-hash", "abc"}};
  return p;
}

TEST(DecideTest, PoolsOfTheOriginalAreAdoptedReusedAndCollected) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.jobsets["ml/train"] = Js("train");
  in.leaders = {Leader("train", kKey, "tpu-v6e-slice", "4x4", 4)};
  cloud::NodePool gone = OriginalPool("old", kKey2, "ml");
  cloud::NodePool older = OriginalPool("older", kKey2, "");
  older.labels = cloud::StringMap{{kCompatManagerLabel, kCompatManagerValue}, {kCompatNodepoolIdLabel, "older"}};
  cloud::NodePool foreign = OriginalPool("mine", kKey2, "ml");
  foreign.labels.reset();
  in.live_pools = {OriginalPool("train", kKey, "ml"), gone, older, foreign};
  EXPECT_EQ(CompatPoolName("train", kKey), "train-01234");
  EXPECT_EQ(CompatPoolName(std::string(40, 'j'), kKey), std::string(34, 'j') + "-01234");
  auto owner = WorkloadOwner(older);
  ASSERT_TRUE(owner);
  EXPECT_EQ(owner->Key(), "default/older") << "the original's default namespace";
  EXPECT_FALSE(WorkloadOwner(foreign));

  Decision d = Decide(in);
  EXPECT_TRUE(d.actions.empty()) << "the leader's pool is the original's train-01234; the others wait out the grace";
  EXPECT_TRUE(d.refusals.empty());
  EXPECT_EQ(d.pools.size(), 3u);
  EXPECT_EQ(d.chips_in_use, 48) << "pools in their grace period still count";
  in.gone_since = d.gone_since;
  in.now += minutes(6);
  d = Decide(in);
  EXPECT_EQ(Summary(d), (std::vector<std::string>{"delete old-fedcb", "delete older-fedcb"}));
}

TEST(DecideTest, AChangedJobSetGetsItsPoolReplacedOnceTheOldOneIsGone) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  auto old_leader = Leader("train", kKey, "tpu-v6e-slice", "2x4", 4);
  old_leader.jobset_uid = "uid-1";
  cloud::NodePool old_pool = BuildSlice(policy, kCluster, old_leader)->pool;
  old_pool.status = "RUNNING";
  in.live_pools = {old_pool};
  auto leader = Leader("train", kKey, "tpu-v6e-slice", "4x4", 4);
  leader.jobset_uid = "uid-2";
  in.leaders = {leader};
  auto js = Js("train");
  js.uid = "uid-2";
  in.jobsets["ml/train"] = js;
  // The old JobSet's pods are still there: wait, and say so.
  in.live_jobset_uids = {"uid-2", "uid-1"};
  Decision d = Decide(in);
  EXPECT_TRUE(d.actions.empty());
  ASSERT_EQ(d.refusals.size(), 1u);
  EXPECT_EQ(d.refusals[0].event_reason, "TPUProvisioningWaiting");
  EXPECT_NE(d.refusals[0].reason.find("uid uid-1"), std::string::npos) << d.refusals[0].reason;
  // Gone: the pool is deleted now (no grace: its JobSet is not coming back) …
  in.live_jobset_uids = {"uid-2"};
  d = Decide(in);
  EXPECT_EQ(Summary(d), std::vector<std::string>{"delete train-0123456789ab"});
  ASSERT_EQ(d.refusals.size(), 1u);
  EXPECT_EQ(d.refusals[0].event_reason, "TPUNodePoolReplaced");
  EXPECT_NE(d.refusals[0].reason.find("ct6e-standard-4t ×2 2x4 → ct6e-standard-4t ×4 4x4"), std::string::npos)
      << d.refusals[0].reason;
  // … and while it stops, the leader waits with an Event; once gone, the create.
  in.live_pools[0].status = "STOPPING";
  d = Decide(in);
  EXPECT_TRUE(d.actions.empty());
  ASSERT_EQ(d.refusals.size(), 1u);
  EXPECT_EQ(d.refusals[0].event_reason, "TPUProvisioningWaiting");
  in.live_pools.clear();
  d = Decide(in);
  EXPECT_EQ(Summary(d), std::vector<std::string>{"create train-0123456789ab"});
  EXPECT_EQ(d.actions[0].node_pool->resource_labels->at(kPoolJobSetUidLabel), "uid-2");
  // The same shape under a new UID reuses the pool: nothing to replace.
  in.live_pools = {old_pool};
  in.leaders[0] = old_leader;
  in.leaders[0].jobset_uid = "uid-2";
  d = Decide(in);
  EXPECT_TRUE(d.actions.empty());
  EXPECT_TRUE(d.refusals.empty());
}

TEST(DecideTest, V7xUsesAPreCreatedWorkloadPolicyWhenThereIsOne) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.jobsets["ml/train"] = Js("train");
  in.leaders = {Leader("train", kKey, "tpu7x", "2x2x4", 4)};
  Decision d = Decide(in);
  EXPECT_EQ(Summary(d), (std::vector<std::string>{"create train-0123456789ab-wp", "create train-0123456789ab"}));
  cloud::WorkloadPolicy pre;
  pre.name = "tpu-provisioner-2x2x4";
  pre.region = "us-east5";
  pre.type = "HIGH_THROUGHPUT";
  pre.accelerator_topology = "2x2x4";
  in.live_policies = {pre};
  d = Decide(in);
  EXPECT_EQ(Summary(d), std::vector<std::string>{"create train-0123456789ab"});
  EXPECT_EQ(d.actions[0].node_pool->placement_policy->policy_name, "tpu-provisioner-2x2x4");
  EXPECT_TRUE(d.actions[0].depends_on.empty());
  // Its pool's delete leaves the shared policy alone.
  cloud::NodePool live = *d.actions[0].node_pool;
  live.status = "RUNNING";
  in.live_pools = {live};
  in.leaders.clear();
  in.jobsets.clear();
  in.now += minutes(10);
  d = Decide(in);
  in.gone_since = d.gone_since;
  in.now += minutes(10);
  d = Decide(in);
  EXPECT_EQ(Summary(d), std::vector<std::string>{"delete train-0123456789ab"});
}

}  // namespace
}  // namespace tpu::demand
