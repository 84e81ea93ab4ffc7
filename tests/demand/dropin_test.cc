// spec.demand as a drop-in for the GKE TPU Provisioner (GoogleCloudPlatform/
// ai-on-gke, tpu-provisioner/), end to end over both emulators: its JobSets'
// selectors and annotations, its shared reservations, the pools it left in the
// cloud, a JobSet that comes back changed, the node options it offers and the
// Events it emits. The fixture plays scheduler and kubelet (demand_fixture.h);
// create bodies are read from the cloud emulator's record of the requests.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "demand_fixture.h"

namespace tpu::demand::testing {
namespace {

using std::chrono::seconds;

class DropInTest : public DemandFixture {
 protected:
  // Passes until `cond` holds (each pass: refresh, plan, apply).
  bool PassUntil(const std::function<bool()>& cond) {
    return Eventually([&] {
      Pass();
      return cond();
    });
  }
  // Events about JobSet ns/name, oldest first, as "Reason" strings.
  std::vector<std::string> JobSetEvents(const std::string& ns, const std::string& name) {
    std::vector<std::pair<long, std::string>> found;
    auto list = kube_->client->List(kube::resources::kEvents, ns, {});
    if (!list.ok()) return {};
    for (const auto& e : list->items) {
      const json& o = e["involvedObject"];
      if (o.value("kind", "") != "JobSet" || o.value("name", "") != name) continue;
      // The emulator's UIDs count up: creation order.
      std::string uid = e["metadata"].value("uid", "uid-0");
      found.push_back({std::stol(uid.substr(uid.rfind('-') + 1)), e.value("reason", "")});
    }
    std::sort(found.begin(), found.end());
    std::vector<std::string> out;
    for (const auto& [n, r] : found) out.push_back(r);
    return out;
  }
  std::string EventMessage(const std::string& reason) {
    auto e = Events(reason);
    return e.empty() ? "" : e.back().value("message", "");
  }
  void DeleteJobSetAndPods(const std::string& ns, const std::string& name, int jobs, int vms) {
    ASSERT_TRUE(kube_->client->Delete(kube::resources::kJobSets, ns, name).ok());
    for (int j = 0; j < jobs; ++j)
      for (int i = 0; i < vms; ++i)
        ASSERT_TRUE(kube_->client->Delete(kube::resources::kPods, ns, PodName(name, j, i)).ok());
  }
};

// The original's admission webhook adds the location hint to every Job and
// workloads may turn ICI resiliency off; both selectors must be on the nodes
// or the pods never schedule.
TEST_F(DropInTest, IciResiliencyAndLocationHintSelectorsScheduleOntoThePools) {
  pod_edit_ = [](json& pod) {
    pod["spec"]["nodeSelector"][kIciResiliencySelector] = "false";
    pod["spec"]["nodeSelector"][kLocationHintSelector] = "cell-7";
  };
  CreateJobSet("train", 2, "tpu-v6e-slice", "2x4", 4, 2);
  ASSERT_TRUE(PassUntil([&] { return LivePools().size() == 2; }));
  ASSERT_TRUE(PassUntil([&] {
    auto p = LivePools();
    return std::all_of(p.begin(), p.end(), [](const auto& e) { return e.second.status == "RUNNING"; });
  }));
  auto creates = RecordedCreates();
  ASSERT_EQ(creates.size(), 2u);
  for (const auto& [name, body] : creates) {
    EXPECT_EQ(body["config"]["labels"].value(kIciResiliencySelector, ""), "false") << name;
    EXPECT_EQ(body["config"]["labels"].value(kLocationHintSelector, ""), "cell-7") << name;
  }
  EXPECT_EQ(ScheduleAndRun(), 4) << "every pod finds nodes carrying its selectors";
  // Control: a selector no pool carries keeps a pod pending.
  pod_edit_ = [](json& pod) { pod["spec"]["nodeSelector"]["cloud.google.com/gke-something-else"] = "x"; };
  CreateJobSet("other", 1, "tpu-v6e-slice", "2x4", 4, 2);
  ASSERT_TRUE(PassUntil([&] { return LivePools().size() == 3; }));
  ASSERT_TRUE(PassUntil([&] { return LivePools()[PoolName("other", JobKey("other", 0))].status == "RUNNING"; }));
  EXPECT_EQ(ScheduleAndRun(), 0) << "GKE does not set that label and we do not copy it";
}

// A reservation shared by another project: the pool names
// projects/OWNER/reservations/NAME and draws from the owner's reservation,
// not from a same-named one of the cluster's project.
TEST_F(DropInTest, SharedReservationFromAnotherProjectIsUsed) {
  target_.policy.demand->capacity_types.push_back(manifest::CapacityType::kReservation);
  cloud_emu_->SetCapacity(json::parse(R"({"reservations": [
      {"name": "shared-res", "project": "owner-proj", "zone": "us-east5-b", "accelerator": "tpu-v6e-slice", "chips": 8},
      {"name": "shared-res", "project": "proj-demand", "zone": "us-east5-b", "accelerator": "tpu-v6e-slice", "chips": 0}]})"));
  pod_edit_ = [](json& pod) {
    pod["spec"]["nodeSelector"][kReservationSelector] = "shared-res";
    pod["spec"]["nodeSelector"][kReservationProjectSelector] = "owner-proj";
  };
  CreateJobSet("train", 1, "tpu-v6e-slice", "2x4", 4, 2);
  std::string name = PoolName("train", JobKey("train", 0));
  ASSERT_TRUE(PassUntil([&] { return LivePools()[name].status == "RUNNING"; }));
  auto creates = RecordedCreates();
  ASSERT_EQ(creates.count(name), 1u);
  const json& ra = creates[name]["config"]["reservationAffinity"];
  EXPECT_EQ(ra.value("consumeReservationType", ""), "SPECIFIC_RESERVATION");
  EXPECT_EQ(ra["values"], json::array({"projects/owner-proj/reservations/shared-res"}));
  std::map<std::string, int64_t> used;
  const json state = cloud_emu_->StateSnapshot();
  for (const auto& r : state["capacity"]["reservations"])
    used[r.value("project", "") + "/" + r.value("name", "")] = r.value("used", int64_t{0});
  EXPECT_EQ(used["owner-proj/shared-res"], 8) << state["capacity"].dump();
  EXPECT_EQ(used["proj-demand/shared-res"], 0);
  EXPECT_EQ(ScheduleAndRun(), 2);

  // Spot and a reservation together: refused with an Event that says why.
  pod_edit_ = [](json& pod) {
    pod["spec"]["nodeSelector"][kReservationSelector] = "shared-res";
    pod["spec"]["nodeSelector"][kSpotSelector] = "true";
  };
  CreateJobSet("both", 1, "tpu-v6e-slice", "2x4", 4, 1);
  ASSERT_TRUE(PassUntil([&] { return !Events("TPUProvisioningRefused").empty(); }));
  EXPECT_NE(EventMessage("TPUProvisioningRefused").find("both spot"), std::string::npos)
      << EventMessage("TPUProvisioningRefused");
  EXPECT_EQ(LivePools().count(PoolName("both", JobKey("both", 0))), 0u);
}

// Deleted and submitted again with a new topology while its old pool is in
// its grace period: the pool is replaced, not reused and not left to block.
// While the old JobSet's pods are still there the leader is told it waits.
TEST_F(DropInTest, ResubmittedWithANewTopologyGetsANewPoolWithAnEvent) {
  CreateJobSet("train", 1, "tpu-v6e-slice", "2x4", 4, 2);
  std::string name = PoolName("train", JobKey("train", 0));
  ASSERT_TRUE(PassUntil([&] { return LivePools()[name].status == "RUNNING"; }));
  EXPECT_EQ(ScheduleAndRun(), 2);

  // The JobSet is deleted; its pods are still terminating when it comes back.
  ASSERT_TRUE(kube_->client->Delete(kube::resources::kJobSets, "ml", "train").ok());
  pod_edit_ = [](json& pod) { pod["metadata"]["name"] = pod["metadata"].value("name", "") + "-b"; };
  CreateJobSet("train", 1, "tpu-v6e-slice", "4x4", 4, 4);
  ASSERT_TRUE(PassUntil([&] { return !Events("TPUProvisioningWaiting").empty(); }));
  EXPECT_NE(EventMessage("TPUProvisioningWaiting").find("earlier JobSet ml/train"), std::string::npos)
      << EventMessage("TPUProvisioningWaiting");
  EXPECT_EQ(LivePools()[name].node_count, 2) << "the old pool stays while its pods do";

  // The old pods go: the pool is deleted at once (not after the grace
  // period), then created again in the new shape.
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(kube_->client->Delete(kube::resources::kPods, "ml", PodName("train", 0, i)).ok());
  ASSERT_TRUE(PassUntil([&] { return !Events("TPUNodePoolReplaced").empty(); }));
  EXPECT_NE(EventMessage("TPUNodePoolReplaced").find("2x4 → ct6e-standard-4t ×4 4x4"), std::string::npos)
      << EventMessage("TPUNodePoolReplaced");
  ASSERT_TRUE(PassUntil([&] {
    auto p = LivePools();
    return p.count(name) && p[name].node_count == 4 && p[name].status == "RUNNING";
  }));
  EXPECT_EQ(LivePools()[name].placement_policy->tpu_topology, "4x4");
  EXPECT_EQ(ScheduleAndRun(), 4);
  auto events = JobSetEvents("ml", "train");
  EXPECT_NE(std::find(events.begin(), events.end(), "TPUNodePoolReplaced"), events.end());
  EXPECT_EQ(transport_->client_errors.load(), 0);
}

// The cloud as the original left it: pools named jobset[:34]-jobkey[:5] with
// its node labels. A running JobSet's pool is used (no second pool), and each
// is deleted once its JobSet completes or is gone; a pool without its labels
// is never touched.
TEST_F(DropInTest, PoolsTheOriginalCreatedAreAdoptedAndDeletedWhenTheirJobSetCompletes) {
  // Pools of other JobSets are 4x4 so that 2x4 pods cannot land on them.
  auto original = [&](const std::string& jobset, const std::string& ns, bool labelled, int nodes = 2) {
    cloud::NodePool p;
    p.name = CompatPoolName(jobset, JobKey(jobset, 0));
    p.machine_type = "ct6e-standard-4t";
    p.node_count = nodes;
    p.locations = {kZone};
    p.placement_policy = cloud::PlacementPolicy{"COMPACT", nodes == 2 ? "2x4" : "4x4", ""};
    p.management = cloud::NodeManagement{true, true};
    if (labelled)
      p.labels = cloud::StringMap{{kCompatManagerLabel, kCompatManagerValue},
                                  {kCompatJobSetLabel, jobset},
                                  {kCompatNamespaceLabel, ns},
                                  {"google.com/tpu-provisioner-parent-kind", "job"},
                                  {"google.com/tpu-provisioner-nodepool-hash", "2874638312"}};
    return p;
  };
  const std::string long_name = "a-jobset-with-a-name-longer-than-34-chars";
  for (const auto& p : {original("train", "ml", true), original("gone", "ml", true, 4),
                        original(long_name, "ml", true), original("bystander", "ml", false, 4)})
    ASSERT_TRUE(cloud_->gke().CreateNodePool({kProject, kZone, kClusterName}, p).ok()) << p.name;
  EXPECT_EQ(CompatPoolName(long_name, JobKey(long_name, 0)).size(), 40u);
  ASSERT_TRUE(Eventually([&] {
    auto p = LivePools();
    return p.size() == 4 && std::all_of(p.begin(), p.end(), [](const auto& e) { return e.second.status == "RUNNING"; });
  }));
  int creates_before = transport_->pool_creates.load();
  StartController();  // the switch-over: our daemon starts where the original stopped

  CreateJobSet("train", 1, "tpu-v6e-slice", "2x4", 4, 2);  // its leader waits again (a restart)
  CreateJobSet(long_name, 1, "tpu-v6e-slice", "2x4", 4, 2);
  Decision d;
  ASSERT_TRUE(Eventually([&] { Pass(&d); return d.pools.size() == 3; }));
  EXPECT_TRUE(std::none_of(d.actions.begin(), d.actions.end(),
                           [](const plan::Action& a) { return a.kind == plan::ActionKind::kCreate; }))
      << "the original's pools serve their JobSets";
  EXPECT_EQ(ScheduleAndRun(), 4);
  EXPECT_NE(NodeOfPod("ml", "train-slice-0-0").find(CompatPoolName("train", JobKey("train", 0))), std::string::npos);

  // "gone" has no JobSet, "train" completes: both deleted after the grace period.
  SetJobSetCondition("ml", "train", "Completed");
  ASSERT_TRUE(Eventually([&] { Pass(&d); return d.next_due.has_value(); }));
  clock_.Advance(seconds(301));
  ASSERT_TRUE(PassUntil([&] { return LivePools().size() == 2; }));
  auto pools = LivePools();
  EXPECT_EQ(pools.count(CompatPoolName(long_name, JobKey(long_name, 0))), 1u) << "its JobSet runs";
  EXPECT_EQ(pools.count(CompatPoolName("bystander", JobKey("bystander", 0))), 1u) << "not the original's";
  EXPECT_EQ(transport_->pool_creates.load(), creates_before) << "nothing created";
  auto events = JobSetEvents("ml", "train");
  EXPECT_NE(std::find(events.begin(), events.end(), "NodePoolDeletionSucceeded"), events.end());
}

// Every node option reaches the create body, with the GKE API's field names,
// as the emulator recorded the request.
TEST_F(DropInTest, EveryNodeOptionReachesTheCreateBody) {
  auto& policy = *target_.policy.demand;
  policy.service_account = "tpu-nodes@proj-demand.iam.gserviceaccount.com";
  policy.allowed_service_accounts = {"team-a@proj-demand.iam.gserviceaccount.com"};
  policy.tags = {"tpu-nodes", "allow-dcn"};
  policy.max_pods_per_node = 32;
  policy.secure_boot = false;
  policy.secondary_boot_disk = "projects/proj-demand/global/images/jax-cache";
  policy.disk_type = "hyperdisk-balanced";
  policy.boot_disk_kms_key = "projects/keys/locations/us-east5/keyRings/tpu/cryptoKeys/boot";
  policy.pod_labels_to_nodes = {"team"};
  policy.tpu_resource = "example.com/tpu";
  pod_edit_ = [](json& pod) {
    json& res = pod["spec"]["containers"][0]["resources"]["limits"];
    res["example.com/tpu"] = res[kTpuResource];
    res.erase(kTpuResource);
    pod["metadata"]["labels"]["team"] = "research";
    pod["metadata"]["labels"]["run"] = "r-17";
    pod["metadata"]["annotations"][kCompatCopyLabels] = "run";
    pod["metadata"]["annotations"][kCompatAdditionalNetworks] = "dcn-vpc-1:dcn-sub-1, dcn-vpc-2:dcn-sub-2";
    pod["metadata"]["annotations"][kCompatNodeServiceAccount] = "team-a@proj-demand.iam.gserviceaccount.com";
  };
  CreateJobSet("train", 1, "tpu-v6e-slice", "2x4", 4, 2);
  std::string name = PoolName("train", JobKey("train", 0));
  ASSERT_TRUE(PassUntil([&] { return LivePools()[name].status == "RUNNING"; }));
  auto creates = RecordedCreates();
  ASSERT_EQ(creates.count(name), 1u);
  const json& np = creates[name];
  const json& c = np["config"];
  EXPECT_EQ(c["machineType"], "ct6e-standard-4t") << "chips counted from example.com/tpu";
  EXPECT_EQ(c["serviceAccount"], "team-a@proj-demand.iam.gserviceaccount.com");
  EXPECT_EQ(np["networkConfig"]["additionalNodeNetworkConfigs"],
            json::parse(R"([{"network":"dcn-vpc-1","subnetwork":"dcn-sub-1"},{"network":"dcn-vpc-2","subnetwork":"dcn-sub-2"}])"));
  EXPECT_EQ(c["tags"], json::array({"tpu-nodes", "allow-dcn"}));
  EXPECT_EQ(np["maxPodsConstraint"]["maxPodsPerNode"], "32");
  EXPECT_EQ(c["shieldedInstanceConfig"]["enableSecureBoot"], false);
  EXPECT_EQ(c["shieldedInstanceConfig"]["enableIntegrityMonitoring"], true);
  EXPECT_EQ(c["secondaryBootDisks"],
            json::parse(R"([{"diskImage":"projects/proj-demand/global/images/jax-cache","mode":"CONTAINER_IMAGE_CACHE"}])"));
  EXPECT_EQ(c["diskType"], "hyperdisk-balanced");
  EXPECT_EQ(c["bootDiskKmsKey"], "projects/keys/locations/us-east5/keyRings/tpu/cryptoKeys/boot");
  EXPECT_EQ(c["labels"].value("team", ""), "research");
  EXPECT_EQ(c["labels"].value("run", ""), "r-17");
  // Read back from the cloud as sent.
  const cloud::NodePool live = LivePools()[name];
  EXPECT_EQ(live.max_pods_per_node, 32);
  EXPECT_EQ(live.boot_disk_kms_key, "projects/keys/locations/us-east5/keyRings/tpu/cryptoKeys/boot");
  EXPECT_EQ(live.additional_node_networks.size(), 2u);

  // The emulator checks what GKE checks: pods per node between 8 and 256.
  cloud::NodePool bad = live;
  bad.name = "bad-max-pods";
  bad.max_pods_per_node = 4;
  bad.status.clear();
  bad.self_link.clear();
  bad.instance_group_urls.clear();
  int errors = transport_->client_errors.load();
  auto op = cloud_->gke().CreateNodePool({kProject, kZone, kClusterName}, bad);
  ASSERT_FALSE(op.ok());
  EXPECT_NE(op.status().message().find("max_pods_per_node must be between 8 and 256"), std::string::npos)
      << op.status().message();
  EXPECT_EQ(transport_->client_errors.load(), errors + 1);

  // The default: 15 pods per node and Secure Boot on, as the original.
  policy = manifest::DemandPolicy{};
  policy.accelerators = {"tpu-v6e-slice"};
  policy.max_chips = 64;
  pod_edit_ = nullptr;
  CreateJobSet("plain", 1, "tpu-v6e-slice", "2x4", 4, 2);
  std::string plain = PoolName("plain", JobKey("plain", 0));
  ASSERT_TRUE(PassUntil([&] { return RecordedCreates().count(plain) > 0; }));
  const json dflt = RecordedCreates()[plain];
  EXPECT_EQ(dflt["maxPodsConstraint"]["maxPodsPerNode"], "15");
  EXPECT_EQ(dflt["config"]["shieldedInstanceConfig"]["enableSecureBoot"], true);
}

// The Events on the JobSet, as the original emits them: a create that ends in
// a stockout, the create that later succeeds, and the delete after completion.
TEST_F(DropInTest, EventsOfAFailedCreateAndOfADelete) {
  cloud_emu_->SetZoneCapacity(kZone, "tpu-v6e-slice", 0);
  CreateJobSet("train", 1, "tpu-v6e-slice", "2x4", 4, 2);
  apply::ApplyReport r;
  ASSERT_TRUE(Eventually([&] { r = Pass(); return r.waiting_for_capacity == 1; }));
  EXPECT_EQ(JobSetEvents("ml", "train"),
            (std::vector<std::string>{"NodePoolCreationStarted", "NodePoolCreationFailed"}));
  EXPECT_NE(EventMessage("NodePoolCreationFailed").find("STOCKOUT"), std::string::npos)
      << EventMessage("NodePoolCreationFailed");

  cloud_emu_->SetZoneCapacity(kZone, "tpu-v6e-slice", 100000);
  clock_.Advance(seconds(31));
  std::string name = PoolName("train", JobKey("train", 0));
  ASSERT_TRUE(PassUntil([&] { return LivePools()[name].status == "RUNNING"; }));
  EXPECT_EQ(ScheduleAndRun(), 2);
  SetJobSetCondition("ml", "train", "Completed");
  Decision d;
  ASSERT_TRUE(Eventually([&] { Pass(&d); return d.next_due.has_value(); }));
  clock_.Advance(seconds(301));
  ASSERT_TRUE(PassUntil([&] { return LivePools().empty(); }));
  // Repeats of one reason bump its Event's count: one Event per reason.
  EXPECT_EQ(JobSetEvents("ml", "train"),
            (std::vector<std::string>{"NodePoolCreationStarted", "NodePoolCreationFailed",
                                      "NodePoolCreationSucceeded", "NodePoolDeletionStarted",
                                      "NodePoolDeletionSucceeded"}));
  EXPECT_NE(EventMessage("NodePoolDeletionStarted").find("JobSet ml/train completed"), std::string::npos)
      << EventMessage("NodePoolDeletionStarted");
}

}  // namespace
}  // namespace tpu::demand::testing
