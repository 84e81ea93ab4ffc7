// The list readers (list_reader.h) against the nlohmann readers on what the
// emulator serves: a project with every kind of field a refresh reads (labels,
// taints, placement by topology and by workload policy, reservations, spot,
// autoscaling, management, disks, networks, a pool a stockout left in ERROR,
// templates, MIGs with their current actions, shared reservations, operations
// done, failed and running, GKE's and Compute's), each list fetched whole and
// in small pages, read both ways and compared field by field.
#include "cloud/list_reader.h"

#include <gtest/gtest.h>

#include "cloud/emulator_fixture.h"
#include "cloud/list_reader_test_util.h"

namespace tpu::cloud {
namespace {

using nlohmann::json;

constexpr const char* kProject = "proj-l";

class ListReaderEmulatorTest : public testing::EmulatorTest {
 protected:
  void SetUp() override {
    StartEmulator(/*op_latency_ms=*/0);
    emulator_->SetCapacity(json::parse(R"({
      "zones": [{"zone": "us-east5-c", "accelerator": "tpu-v6e-slice", "chips": 0}],
      "reservations": [
        {"name": "pool-res", "project": "owner", "zone": "us-east5-b", "machineType": "ct6e-standard-4t",
         "count": 4, "shared": ["proj-l", "other"], "specificReservationRequired": true,
         "deploymentType": "DENSE", "blockCount": 2},
        {"name": "local", "project": "proj-l", "zone": "us-east5-b", "machineType": "ct6e-standard-4t", "count": 2},
        {"name": "west", "project": "proj-l", "zone": "us-west4-a", "machineType": "ct5p-hightpu-4t", "count": 8}]})"));
    for (const char* location : {"us-east5", "us-east5-b", "us-east5-c"})
      ASSERT_TRUE(emulator_->EnsureCluster(kProject, location, std::string("c-") + location).ok());
    CreatePools();
    CreateCompute();
  }

  void Create(const std::string& location, const NodePool& p, bool may_fail = false) {
    auto op = cloud_->gke().CreateNodePool({kProject, location, std::string("c-") + location}, p);
    ASSERT_TRUE(op.ok()) << p.name << ": " << op.status().ToString();
    Operation done = AwaitDone(*op);
    if (!may_fail) {
      EXPECT_FALSE(done.failed()) << p.name << ": " << done.error_message;
    }
  }

  void CreatePools() {
    NodePool cpu;
    cpu.name = "cpu-everything";
    cpu.machine_type = "e2-standard-4";
    cpu.node_count = 2;
    cpu.disk_size_gb = 150;
    cpu.disk_type = "pd-ssd";
    cpu.image_type = "COS_CONTAINERD";
    cpu.service_account = "sa@proj-l.iam.gserviceaccount.com";
    cpu.oauth_scopes = std::vector<std::string>{"https://www.googleapis.com/auth/cloud-platform"};
    cpu.labels = StringMap{{"team", "ml"}, {"env", "prod"}};
    cpu.taints = std::vector<NodeTaint>{{"dedicated", "ml", "NO_SCHEDULE"}, {"spot", "true", "PREFER_NO_SCHEDULE"}};
    cpu.resource_labels = StringMap{{kManagedLabel, "true"}, {kTargetHashLabel, "h1"}};
    cpu.tags = std::vector<std::string>{"a", "b"};
    cpu.metadata = StringMap{{"disable-legacy-endpoints", "true"}};
    cpu.secure_boot = true;
    cpu.integrity_monitoring = true;
    cpu.boot_disk_kms_key = "projects/proj-l/locations/us-east5/keyRings/r/cryptoKeys/k";
    cpu.secondary_boot_disks = {{"projects/proj-l/global/images/cache", "CONTAINER_IMAGE_CACHE"}};
    cpu.max_pods_per_node = 64;
    cpu.additional_node_networks = {{"net-2", "sub-2"}};
    cpu.autoscaling = NodePoolAutoscaling{true, 1, 5, "BALANCED"};
    cpu.management = NodeManagement{true, true};
    cpu.spot = true;
    Create("us-east5", cpu);

    NodePool slice;
    slice.name = "v5p-slice";
    slice.machine_type = "ct5p-hightpu-4t";
    slice.placement_policy = PlacementPolicy{"COMPACT", "2x2x2", ""};
    slice.node_count = 2;
    slice.locations = {"us-east5-a"};
    slice.taints = std::vector<NodeTaint>{{"google.com/tpu", "present", "NO_SCHEDULE"}};
    slice.management = NodeManagement{true, true};
    Create("us-east5", slice);

    NodePool reserved;
    reserved.name = "v6e-reserved";
    reserved.machine_type = "ct6e-standard-4t";
    reserved.placement_policy = PlacementPolicy{"COMPACT", "2x4", ""};
    reserved.node_count = 2;
    reserved.reservation_affinity = ReservationAffinity{
        "SPECIFIC_RESERVATION", "compute.googleapis.com/reservation-name", {"projects/owner/reservations/pool-res"}};
    reserved.autoscaling = NodePoolAutoscaling{true, 0, 2, "ANY"};
    Create("us-east5-b", reserved);

    NodePool stocked_out;
    stocked_out.name = "v6e-stockout";
    stocked_out.machine_type = "ct6e-standard-4t";
    stocked_out.node_count = 1;
    Create("us-east5-c", stocked_out, /*may_fail=*/true);
  }

  void CreateCompute() {
    WorkloadPolicy wp;
    wp.name = "wp-1";
    wp.region = "us-east5";
    wp.type = "HIGH_THROUGHPUT";
    wp.accelerator_topology = "2x2x2";
    wp.description = kComputeMarker;
    auto op = cloud_->compute().InsertWorkloadPolicy(kProject, wp);
    ASSERT_TRUE(op.ok()) << op.status().ToString();
    AwaitDone(*op);

    NodePool tpu7x;  // placed by the workload policy
    tpu7x.name = "ironwood";
    tpu7x.machine_type = "tpu7x-standard-4t";
    tpu7x.placement_policy = PlacementPolicy{"", "", "projects/proj-l/regions/us-east5/resourcePolicies/wp-1"};
    tpu7x.node_count = 2;
    tpu7x.locations = {"us-east5-a"};
    Create("us-east5", tpu7x, /*may_fail=*/true);

    InstanceTemplate t;
    t.name = "tmpl-reserved";
    t.description = kComputeMarker;
    t.machine_type = "ct6e-standard-4t";
    t.provisioning_model = "RESERVATION_BOUND";
    t.reservation = "local";
    t.on_host_maintenance = "TERMINATE";
    t.instance_termination_action = "DELETE";
    t.boot_disk_size_gb = 100;
    t.disk_type = "hyperdisk-balanced";
    t.source_image = "projects/cos-cloud/global/images/family/cos-stable";
    t.subnetwork = "projects/proj-l/regions/us-east5/subnetworks/s";
    t.service_accounts = {"sa@proj-l.iam.gserviceaccount.com"};
    t.network_tags = {"tpu"};
    t.metadata = {{"kube-labels", "a=b"}, {"startup-script", "#!/bin/sh\necho \"joined\"\n"}};
    auto top = cloud_->compute().InsertInstanceTemplate(kProject, t);
    ASSERT_TRUE(top.ok()) << top.status().ToString();
    AwaitDone(*top);
    InstanceTemplate spot = t;
    spot.name = "tmpl-spot";
    spot.provisioning_model = "SPOT";
    spot.reservation.clear();
    spot.instance_termination_action = "STOP";
    AwaitDone(*cloud_->compute().InsertInstanceTemplate(kProject, spot));

    for (const char* zone : {"us-east5-b", "us-east5-a"}) {
      const bool bulk = zone == std::string("us-east5-b");  // where the reservation is
      InstanceGroupManager m;
      m.name = std::string("mig-") + zone;
      m.zone = zone;
      m.description = kComputeMarker;
      m.instance_template = std::string("projects/proj-l/global/instanceTemplates/") +
                            (bulk ? "tmpl-reserved" : "tmpl-spot");
      m.target_size = 2;
      m.target_size_policy_mode = bulk ? "BULK" : "INDIVIDUAL";
      auto mop = cloud_->compute().InsertInstanceGroupManager(kProject, m);
      ASSERT_TRUE(mop.ok()) << mop.status().ToString();
      AwaitDone(*mop);
    }
    // A refused insert leaves a failed operation in the list.
    InstanceTemplate bad = t;
    bad.name = "tmpl-reserved";
    (void)cloud_->compute().InsertInstanceTemplate(kProject, bad);
  }

  // The body of one GET, as the clients receive it.
  std::string Get(const std::string& path) {
    http::HttpRequest req;
    req.method = "GET";
    req.url = emulator_->endpoint() + path;
    req.headers = {{"Authorization", "Bearer emu-token"}, {"Accept", "application/json"}};
    auto res = cloud_->transport().Send(req);
    EXPECT_TRUE(res.ok()) << res.status().ToString();
    if (!res.ok()) return "";
    EXPECT_EQ(res->status, 200) << res->body;
    return res->body;
  }

  // Every page of aggregated/<collection>, `max` items a page.
  std::vector<std::string> Pages(const std::string& collection, int max) {
    std::vector<std::string> pages;
    std::string token;
    do {
      std::string path = "/compute/v1/projects/" + std::string(kProject) + "/aggregated/" + collection +
                         "?maxResults=" + std::to_string(max);
      if (!token.empty()) path += "&pageToken=" + UrlEncode(token);
      pages.push_back(Get(path));
      auto j = json::parse(pages.back(), nullptr, false);
      token = j.is_object() ? j.value("nextPageToken", "") : "";
    } while (!token.empty() && pages.size() < 100);
    return pages;
  }
};

TEST_F(ListReaderEmulatorTest, EveryListReadsAsTheTreeReadersReadIt) {
  const std::string clusters = Get("/v1/projects/proj-l/locations/-/clusters");
  ASSERT_NE(clusters.find("RUNNING"), std::string::npos) << clusters;
  testing::ExpectSameClusters(clusters, kProject);
  std::string copy = clusters;
  auto read = ReadClusterList(copy, kProject);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  size_t pools = 0;
  bool error_pool = false;
  for (const auto& c : *read) {
    pools += c.node_pools.size();
    for (const auto& p : c.node_pools) error_pool |= p.status == "ERROR";
  }
  EXPECT_GE(pools, 4u) << "the pools the test made are listed: the comparison is not of empty lists";
  EXPECT_TRUE(error_pool) << "the stocked-out pool is in ERROR";

  testing::ExpectSameGkeOperations(Get("/v1/projects/proj-l/locations/-/operations"), kProject);
  EXPECT_NE(Get("/v1/projects/proj-l/locations/-/operations").find("CREATE_NODE_POOL"), std::string::npos);

  for (int max : {500, 1}) {
    SCOPED_TRACE(max);
    size_t templates = 0, groups = 0, policies = 0, reservations = 0, operations = 0;
    for (const auto& body : Pages("instanceTemplates", max)) {
      auto want = testing::ReferenceInstanceTemplates(body);
      testing::ExpectSamePage(body, want, [](std::string& b, auto* out) { return ReadInstanceTemplatePage(b, out); });
      if (want.ok()) templates += want->items.size();
    }
    for (const auto& body : Pages("instanceGroupManagers", max)) {
      auto want = testing::ReferenceInstanceGroupManagers(body);
      testing::ExpectSamePage(body, want,
                              [](std::string& b, auto* out) { return ReadInstanceGroupManagerPage(b, out); });
      if (want.ok()) groups += want->items.size();
    }
    for (const auto& body : Pages("resourcePolicies", max)) {
      auto want = testing::ReferenceWorkloadPolicies(body);
      testing::ExpectSamePage(body, want, [](std::string& b, auto* out) { return ReadWorkloadPolicyPage(b, out); });
      if (want.ok()) policies += want->items.size();
    }
    for (const auto& body : Pages("reservations", max)) {
      auto want = testing::ReferenceReservations(body, kProject);
      testing::ExpectSamePage(body, want,
                              [](std::string& b, auto* out) { return ReadReservationPage(b, kProject, out); });
      if (want.ok()) reservations += want->items.size();
    }
    for (bool running : {false, true}) {
      for (const auto& body : Pages("operations", max)) {
        auto want = testing::ReferenceComputeOperations(body, kProject, running);
        testing::ExpectSamePage(body, want, [&](std::string& b, auto* out) {
          return ReadComputeOperationPage(b, kProject, running, out);
        });
        if (want.ok() && !running) operations += want->items.size();
      }
    }
    EXPECT_EQ(templates, 2u);
    EXPECT_GE(groups, 2u) << "ours, and GKE's for its pools";
    EXPECT_EQ(policies, 1u);
    EXPECT_EQ(reservations, 2u) << "the project's own";
    EXPECT_GE(operations, 5u);
  }
}

}  // namespace
}  // namespace tpu::cloud
