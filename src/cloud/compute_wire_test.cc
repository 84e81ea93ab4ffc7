// Compute wire mapping: workload policies, instance templates (int64 as
// strings), managed instance groups, compute#operation with errors.
#include "cloud/compute_wire.h"

#include <gtest/gtest.h>

namespace tpu::cloud {
namespace {

using nlohmann::json;

TEST(ComputeWireTest, WorkloadPolicyRoundTrip) {
  WorkloadPolicy p{"wp-1", "us-central1", "HIGH_THROUGHPUT", "4x4x4", kComputeMarker, "READY",
                   "https://compute.googleapis.com/compute/v1/projects/p/regions/us-central1/resourcePolicies/wp-1",
                   "AUTO_CONNECT"};
  json j = WorkloadPolicyToJson(p);
  EXPECT_EQ(j["workloadPolicy"], json({{"type", "HIGH_THROUGHPUT"}, {"acceleratorTopology", "4x4x4"},
                                       {"acceleratorTopologyMode", "AUTO_CONNECT"}}));
  EXPECT_TRUE(IsWorkloadPolicyJson(j));
  auto back = WorkloadPolicyFromJson(j);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->name, p.name);
  EXPECT_EQ(back->region, "us-central1");
  EXPECT_EQ(back->type, p.type);
  EXPECT_EQ(back->accelerator_topology, p.accelerator_topology);
  EXPECT_EQ(back->accelerator_topology_mode, "AUTO_CONNECT");
  EXPECT_EQ(back->description, p.description);
  EXPECT_EQ(back->self_link, p.self_link);
  // The region comes back from the API as a URL.
  auto fromUrl = WorkloadPolicyFromJson(json::parse(
      R"({"name":"wp","region":"https://compute.googleapis.com/compute/v1/projects/p/regions/us-east5","workloadPolicy":{"type":"HIGH_THROUGHPUT"}})"));
  EXPECT_EQ(fromUrl->region, "us-east5");
  EXPECT_FALSE(IsWorkloadPolicyJson(json::parse(R"({"name":"snap","snapshotSchedulePolicy":{}})")));
}

TEST(ComputeWireTest, InstanceTemplateRoundTripAndWireShape) {
  InstanceTemplate t;
  t.name = "tmpl-1";
  t.description = kComputeMarker;
  t.machine_type = "tpu7x-standard-4t";
  t.provisioning_model = "SPOT";
  t.reservation = "res-a";
  t.source_image = "projects/cos-cloud/global/images/family/cos-stable";
  t.subnetwork = "regions/us-central1/subnetworks/default";
  t.boot_disk_size_gb = 100;
  t.disk_type = "hyperdisk-balanced";
  t.service_accounts = {"sa@p.iam.gserviceaccount.com"};
  t.network_tags = {"tpu"};
  t.metadata = {{"k", "v"}};
  t.on_host_maintenance = "TERMINATE";
  t.instance_termination_action = "STOP";
  json j = InstanceTemplateToJson(t);
  const json& props = j["properties"];
  EXPECT_EQ(props["disks"][0]["initializeParams"]["diskSizeGb"], "100");  // int64 → string
  EXPECT_EQ(props["disks"][0]["boot"], true);
  EXPECT_EQ(props["scheduling"], json({{"provisioningModel", "SPOT"}, {"automaticRestart", false},
                                       {"onHostMaintenance", "TERMINATE"},
                                       {"instanceTerminationAction", "STOP"}}));
  // The workload policy belongs on the MIG, never in the template's properties.
  EXPECT_FALSE(props.contains("resourcePolicies"));
  EXPECT_EQ(props["reservationAffinity"]["consumeReservationType"], "SPECIFIC_RESERVATION");
  EXPECT_EQ(props["metadata"]["items"][0], json({{"key", "k"}, {"value", "v"}}));
  EXPECT_EQ(props["tags"]["items"][0], "tpu");
  EXPECT_EQ(props["serviceAccounts"][0]["email"], "sa@p.iam.gserviceaccount.com");
  auto back = InstanceTemplateFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->name, t.name);
  EXPECT_EQ(back->machine_type, t.machine_type);
  EXPECT_EQ(back->provisioning_model, t.provisioning_model);
  EXPECT_EQ(back->reservation, t.reservation);
  EXPECT_EQ(back->source_image, t.source_image);
  EXPECT_EQ(back->subnetwork, t.subnetwork);
  EXPECT_EQ(back->boot_disk_size_gb, t.boot_disk_size_gb);
  EXPECT_EQ(back->disk_type, t.disk_type);
  EXPECT_EQ(back->service_accounts, t.service_accounts);
  EXPECT_EQ(back->network_tags, t.network_tags);
  EXPECT_EQ(back->metadata, t.metadata);
  EXPECT_EQ(back->on_host_maintenance, "TERMINATE");
  EXPECT_EQ(back->instance_termination_action, "STOP");
  // Numbers are accepted where strings are expected.
  auto numeric = InstanceTemplateFromJson(json::parse(R"({"name":"n","properties":{"disks":[{"boot":true,"initializeParams":{"diskSizeGb":50}}]}})"));
  EXPECT_EQ(numeric->boot_disk_size_gb, 50);
}

TEST(ComputeWireTest, InstanceGroupManagerRoundTrip) {
  InstanceGroupManager m;
  m.name = "slice-a";
  m.zone = "us-central1-a";
  m.description = kComputeMarker;
  m.instance_template = "projects/p/global/instanceTemplates/tmpl-1";
  m.base_instance_name = "slice-a";
  m.target_size = 16;
  m.target_size_policy_mode = "BULK";
  m.workload_policy = "projects/p/regions/us-central1/resourcePolicies/wp-1";
  json j = InstanceGroupManagerToJson(m);
  EXPECT_EQ(j["targetSizePolicy"], json({{"mode", "BULK"}}));
  EXPECT_EQ(j["resourcePolicies"], json({{"workloadPolicy", m.workload_policy}}));
  auto back = InstanceGroupManagerFromJson(j);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->name, m.name);
  EXPECT_EQ(back->zone, m.zone);
  EXPECT_EQ(back->target_size, 16);
  EXPECT_EQ(back->target_size_policy_mode, "BULK");
  EXPECT_EQ(back->workload_policy, m.workload_policy);
  EXPECT_EQ(back->instance_template, m.instance_template);
  auto live = InstanceGroupManagerFromJson(json::parse(
      R"({"name":"g","zone":"https://compute.googleapis.com/compute/v1/projects/p/zones/us-east5-b","targetSize":4,"status":{"isStable":false}})"));
  EXPECT_EQ(live->zone, "us-east5-b");
  EXPECT_EQ(live->status, "UPDATING");
}

TEST(ComputeWireTest, OperationScopesAndErrors) {
  auto zonal = ComputeOperationFromJson(json::parse(R"({"kind":"compute#operation","name":"operation-1",
    "zone":"https://compute.googleapis.com/compute/v1/projects/p/zones/us-central1-a",
    "operationType":"insert","status":"RUNNING","progress":0,
    "selfLink":"https://compute.googleapis.com/compute/v1/projects/p/zones/us-central1-a/operations/operation-1"})"));
  ASSERT_TRUE(zonal.ok());
  EXPECT_EQ(zonal->api, Operation::Api::kCompute);
  EXPECT_EQ(zonal->project, "p");
  EXPECT_EQ(zonal->scope, "zones");
  EXPECT_EQ(zonal->location, "us-central1-a");
  auto regional = ComputeOperationFromJson(json::parse(R"({"name":"o","region":"projects/p/regions/r1","status":"PENDING"})"), "p");
  EXPECT_EQ(regional->scope, "regions");
  EXPECT_EQ(regional->location, "r1");
  auto global = ComputeOperationFromJson(json::parse(R"({"name":"o","status":"DONE"})"), "p");
  EXPECT_EQ(global->scope, "global");
  EXPECT_FALSE(global->failed());
  auto failed = ComputeOperationFromJson(json::parse(R"({"name":"o","status":"DONE","zone":"projects/p/zones/z",
    "httpErrorStatusCode":503,"httpErrorMessage":"SERVICE UNAVAILABLE",
    "error":{"errors":[{"code":"ZONE_RESOURCE_POOL_EXHAUSTED","message":"The zone does not have enough resources"}]}})"), "p");
  ASSERT_TRUE(failed.ok());
  EXPECT_TRUE(failed->failed());
  EXPECT_EQ(failed->error_code, 503);
  EXPECT_EQ(failed->error_reason, "ZONE_RESOURCE_POOL_EXHAUSTED");
  EXPECT_EQ(failed->error_message, "The zone does not have enough resources");
  auto back = ComputeOperationFromJson(ComputeOperationToJson(*failed), "p");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->error_reason, failed->error_reason);
  EXPECT_EQ(back->scope, "zones");
  EXPECT_EQ(back->location, "z");
}

TEST(ComputeWireTest, ManagedInstancesAndGroupActions) {
  // lastAttempt.errors is a ManagedInstanceLastAttemptErrors holding the list.
  auto m = ManagedInstanceFromJson(json::parse(R"({"instance":"https://h/compute/v1/projects/p/zones/z/instances/s-ab12",
    "name":"s-ab12","currentAction":"CREATING","lastAttempt":{"errors":{"errors":[
    {"code":"ZONE_RESOURCE_POOL_EXHAUSTED","message":"The zone does not have enough resources"},{"code":"X"}]}}})"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->name, "s-ab12");
  EXPECT_EQ(m->instance_status, "");
  EXPECT_EQ(m->current_action, "CREATING");
  EXPECT_EQ(m->errors, (std::vector<std::string>{
                           "ZONE_RESOURCE_POOL_EXHAUSTED: The zone does not have enough resources", "X"}));
  EXPECT_FALSE(ManagedInstanceFromJson(json::parse(R"({"lastAttempt":{"errors":[]}})")).ok());

  auto g = InstanceGroupManagerFromJson(json::parse(R"({"name":"g","currentActions":{"creating":2,
    "creatingWithoutRetries":1,"deleting":3,"none":4,"recreating":5,"verifying":6,"abandoning":0}})"));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->current_actions, (MigCurrentActions{2, 1, 3, 4, 5, 6}));

  auto in = InstanceFromJson(json::parse(R"({"name":"s-ab12","zone":"https://h/compute/v1/projects/p/zones/z",
    "status":"STAGING","metadata":{"kind":"compute#metadata","fingerprint":"abc=","items":[{"key":"b","value":"1"},{"key":"a","value":"2"}]}})"));
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(in->zone, "z");
  EXPECT_EQ(in->metadata_fingerprint, "abc=");
  EXPECT_EQ(in->metadata, (std::vector<std::pair<std::string, std::string>>{{"b", "1"}, {"a", "2"}}));
  EXPECT_EQ(InstanceMetadataToJson("", {{"k", "v"}}), json::parse(R"({"items":[{"key":"k","value":"v"}]})"));
}

TEST(ComputeWireTest, ReservationFromTheApisJson) {
  auto r = ReservationFromJson(json::parse(R"({
    "kind": "compute#reservation", "id": "4711", "name": "res-a",
    "zone": "https://www.googleapis.com/compute/v1/projects/owner/zones/us-east5-b",
    "selfLink": "https://www.googleapis.com/compute/v1/projects/owner/zones/us-east5-b/reservations/res-a",
    "status": "READY", "specificReservationRequired": true,
    "specificReservation": {"count": "64", "inUseCount": "16", "assuredCount": "64",
                            "instanceProperties": {"machineType": "tpu7x-standard-4t"}},
    "shareSettings": {"shareType": "SPECIFIC_PROJECTS",
                      "projectMap": {"consumer": {"projectId": "consumer"}}},
    "deploymentType": "DENSE", "resourceStatus": {"reservationBlockCount": 4}})"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->name, "res-a");
  EXPECT_EQ(r->zone, "us-east5-b");
  EXPECT_EQ(r->project, "owner");
  EXPECT_EQ(r->count, 64);  // int64 as a string
  EXPECT_EQ(r->in_use_count, 16);
  EXPECT_EQ(r->free_count(), 48);
  EXPECT_EQ(r->machine_type, "tpu7x-standard-4t");
  EXPECT_TRUE(r->specific_reservation_required);
  EXPECT_EQ(r->share_type, "SPECIFIC_PROJECTS");
  EXPECT_EQ(r->shared_with, std::vector<std::string>{"consumer"});
  EXPECT_EQ(r->deployment_type, "DENSE");
  EXPECT_EQ(r->block_count, 4);
  // A bare one: LOCAL, numbers as numbers, the owner from the caller.
  auto bare = ReservationFromJson(json::parse(R"({"name": "b", "specificReservation": {"count": 2},
                                                  "shareSettings": {"shareType": "LOCAL"}})"), "p");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->project, "p");
  EXPECT_EQ(bare->count, 2);
  EXPECT_EQ(bare->in_use_count, 0);
  EXPECT_FALSE(bare->specific_reservation_required);
  EXPECT_TRUE(bare->shared_with.empty());
  EXPECT_FALSE(ReservationFromJson(json::parse(R"({"specificReservation": {"count": "many"}})")).ok());
}

TEST(ComputeWireTest, UrlSegments) {
  EXPECT_EQ(LastSegment("https://h/compute/v1/projects/p/zones/z1"), "z1");
  EXPECT_EQ(SegmentAfter("https://h/compute/v1/projects/p/zones/z1/x", "zones"), "z1");
  EXPECT_EQ(SegmentAfter("projects/p/zones/z1", "projects"), "p");
  EXPECT_EQ(SegmentAfter("projects/p/zones/z/instanceGroupManagers/n/resize?size=3", "instanceGroupManagers"), "n");
  EXPECT_EQ(SegmentAfter("projects/p", "zones"), "");
}

}  // namespace
}  // namespace tpu::cloud
