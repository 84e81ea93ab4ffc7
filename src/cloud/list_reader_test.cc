// The on-demand list readers against the nlohmann readers they replace on the
// refresh path (list_reader_test_util.h): every body here is read both ways
// and must give the same structs field by field, or the same error. The
// bodies are the wire tests' fixtures, full objects written by the *ToJson
// writers, and the corners: nulls, wrong types, fields read only when another
// says so, scopes out of order, text that is not JSON.
#include "cloud/list_reader.h"

#include <gtest/gtest.h>

#include "cloud/list_reader_test_util.h"

namespace tpu::cloud {
namespace {

using nlohmann::json;
using testing::ExpectSameClusters;
using testing::ExpectSamePage;

NodePool FullPool() {
  NodePool p;
  p.name = "train-v5p-0";
  p.machine_type = "ct5p-hightpu-4t";
  p.disk_size_gb = 200;
  p.disk_type = "hyperdisk-balanced";
  p.image_type = "COS_CONTAINERD";
  p.service_account = "sa@p.iam.gserviceaccount.com";
  p.oauth_scopes = std::vector<std::string>{"https://www.googleapis.com/auth/cloud-platform"};
  p.labels = StringMap{{"team", "ml"}, {"tier", "prod\u00e9\n\"q\""}};
  p.taints = std::vector<NodeTaint>{{"google.com/tpu", "present", "NO_SCHEDULE"}, {"k", "", "NO_EXECUTE"}};
  p.resource_labels = StringMap{{kManagedLabel, "true"}, {kTargetHashLabel, "abc123"}};
  p.tags = std::vector<std::string>{"tpu", "train"};
  p.metadata = StringMap{{"disable-legacy-endpoints", "true"}};
  p.spot = true;
  p.reservation_affinity = ReservationAffinity{"SPECIFIC_RESERVATION", "compute.googleapis.com/reservation-name",
                                               {"projects/owner/reservations/r1"}};
  p.flex_start = true;
  p.secure_boot = true;
  p.integrity_monitoring = false;
  p.boot_disk_kms_key = "projects/p/locations/l/keyRings/r/cryptoKeys/k";
  p.secondary_boot_disks = {{"projects/p/global/images/cache", "CONTAINER_IMAGE_CACHE"}, {"projects/p/global/images/x", ""}};
  p.max_pods_per_node = 32;
  p.additional_node_networks = {{"net-1", "sub-1"}, {"net-2", "sub-2"}};
  p.placement_policy = PlacementPolicy{"COMPACT", "4x4x4", ""};
  p.node_count = 16;
  p.autoscaling = NodePoolAutoscaling{true, 0, 16, "ANY"};
  p.management = NodeManagement{true, false};
  p.version = "1.31.1-gke.100";
  p.locations = {"us-east5-a"};
  p.status = "RUNNING_WITH_ERROR";
  p.status_message = "2 nodes failed: GCE_STOCKOUT";
  p.self_link = "https://container.googleapis.com/v1/projects/p/locations/us-east5/clusters/c/nodePools/train-v5p-0";
  p.instance_group_urls = {"https://www.googleapis.com/compute/v1/projects/p/zones/us-east5-a/instanceGroupManagers/gke-1",
                           "https://www.googleapis.com/compute/v1/projects/p/zones/us-east5-a/instanceGroupManagers/gke-2"};
  return p;
}

TEST(ListReaderTest, FullClustersReadAlike) {
  json pool = NodePoolToJson(FullPool());
  // What GKE says beside the fields we read: skipped.
  pool["upgradeSettings"] = {{"maxSurge", 1}, {"strategy", "SURGE"}, {"blueGreenSettings", {{"x", {1, 2, 3}}}}};
  pool["conditions"] = json::array({{{"code", "GCE_STOCKOUT"}, {"message", "no capacity"}}});
  pool["podIpv4CidrSize"] = 24;
  NodePool tpu7x;
  tpu7x.name = "ironwood-0";
  tpu7x.machine_type = "tpu7x-standard-4t";
  tpu7x.placement_policy = PlacementPolicy{"", "", "projects/p/regions/us-east5/resourcePolicies/wp-1"};
  json list = {{"clusters",
                {{{"name", "c1"}, {"location", "us-east5"}, {"status", "RUNNING"},
                  {"selfLink", "https://container.googleapis.com/v1/projects/sl/locations/us-east5/clusters/c1"},
                  {"releaseChannel", {{"channel", "RAPID"}}}, {"currentMasterVersion", "1.31"},
                  {"nodePools", {pool, NodePoolToJson(tpu7x), NodePoolToJson(NodePool{})}}},
                 {{"name", "c2"}, {"zone", "us-east5-b"}, {"releaseChannel", {{"channel", "UNSPECIFIED"}}}},
                 {{"name", "c3"}, {"location", ""}, {"zone", "legacy-zone"}, {"nodePools", json::array()}}}}};
  ExpectSameClusters(list.dump(), "p");
  ExpectSameClusters(list.dump(2), "");  // project from selfLink; whitespace between tokens
}

TEST(ListReaderTest, WireTestFixturesReadAlike) {
  for (const char* body : {
           R"({"clusters":[{"name":"c1","location":"us-east5","status":"RUNNING","nodePools":[
                {"name":"np","config":{"machineType":"ct6e-standard-4t","diskSizeGb":"100"},"initialNodeCount":2,
                 "status":"RUNNING","instanceGroupUrls":["u"]}]},{"name":"c2","zone":"us-east5-b"}]})",
           R"({"clusters":[],"missingZones":["us-east5-a"]})",
           R"({"clusters":[{"name":"a","nodePools":{}}]})",
           R"({"clusters":[{"name":"a","nodePools":[{"name":"x","config":{"diskSizeGb":"big"}}]}]})",
           R"({"clusters":[{"name":"a","nodePools":[{"name":"x","placementPolicy":{"tpuTopology":"4x4x4","policyName":"wp-1"}}]}]})",
       }) {
    ExpectSameClusters(body, "p");
  }
}

TEST(ListReaderTest, ClusterCornersReadAlike) {
  for (const char* body : {
           // Nulls leave defaults; absent lists are empty.
           R"({"clusters":[{"name":null,"location":null,"nodePools":null}]})",
           R"({"clusters":null})",
           R"({})",
           R"({"clusters":[{"name":"a","nodePools":[{"name":"p","config":null,"autoscaling":null,"management":null,
               "placementPolicy":{"type":"TYPE_UNSPECIFIED"},"version":null,"locations":null}]}]})",
           // Autoscaling: the total_* bounds count only when the per-zone ones are absent (null is present).
           R"({"clusters":[{"nodePools":[{"name":"a","autoscaling":{"enabled":true,"totalMinNodeCount":1,"totalMaxNodeCount":"4"}}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","autoscaling":{"minNodeCount":null,"totalMinNodeCount":3,"totalMaxNodeCount":9}}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","autoscaling":{"totalMinNodeCount":"x","minNodeCount":1,"maxNodeCount":2}}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","autoscaling":{"totalMinNodeCount":"x"}}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","autoscaling":{"enabled":true,"locationPolicy":"LOCATION_POLICY_UNSPECIFIED"}}]}]})",
           // A cluster's zone is read only when it has no location.
           R"({"clusters":[{"name":"a","location":"l","zone":5}]})",
           R"({"clusters":[{"name":"a","location":"","zone":5}]})",
           R"({"clusters":[{"name":"a","zone":"z"}]})",
           // Integers: numbers, decimal strings, nothing else.
           R"({"clusters":[{"nodePools":[{"name":"a","initialNodeCount":"3","maxPodsConstraint":{"maxPodsPerNode":"110"}}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","initialNodeCount":3.5}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","initialNodeCount":"3x"}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","initialNodeCount":""}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","initialNodeCount":-2}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","initialNodeCount":true}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","initialNodeCount":1e400}]}]})",
           // Lists of objects: an element that is not an object reads as an empty one.
           R"({"clusters":[{"nodePools":[{"name":"a","config":{"taints":[5,{"key":"k","effect":"NO_SCHEDULE"}],
               "secondaryBootDisks":["x",{"diskImage":"i"}]},"networkConfig":{"additionalNodeNetworkConfigs":[null,{"network":"n"}]}}]}]})",
           // Wrong types, one at a time, at every depth.
           R"({"clusters":[{"nodePools":[{"name":"a","config":{"labels":{"team":5}}}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","config":{"labels":[]}}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","config":{"taints":{}}}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","config":{"taints":[{"key":1}]}}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","config":{"oauthScopes":["a",2]}}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","config":{"spot":"yes"}}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","config":{"reservationAffinity":{"values":"r"}}}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","config":{"shieldedInstanceConfig":{"enableSecureBoot":1}}}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","config":5}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","management":{"autoRepair":"true"}}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","placementPolicy":[]}]}]})",
           R"({"clusters":[{"nodePools":[{"name":"a","instanceGroupUrls":"u"}]}]})",
           R"({"clusters":[{"name":7,"nodePools":[{"name":"a"}]}]})",
           R"({"clusters":[{"name":"c","releaseChannel":"RAPID"}]})",
           R"({"clusters":[{"name":"c","nodePools":[{"name":5}]}]})",
           R"({"clusters":[{"nodePools":[{"name":5}],"name":"late-name"}]})",
           R"({"clusters":[{"name":"c","status":1,"nodePools":[{"name":5}]}]})",
           R"({"clusters":[{"name":"c","nodePools":[5]}]})",
           R"({"clusters":[5]})",
           R"({"clusters":{}})",
           R"({"clusters":[],"missingZones":"z"})",
           R"({"clusters":[],"missingZones":["a",5]})",
           R"({"missingZones":[],"clusters":[{"name":"ok"}]})",
           R"(5)",
           R"([])",
           // Escapes in keys and values.
           R"({"clusters":[{"name":"a\u00e9\t","nodePools":[{"name":"p","config":{"labels":{"k\"ey":"v\\al\/ue"}}}]}]})",
           // Not JSON.
           "",
           "nope",
           R"({"clusters":[)",
           R"({"clusters":[]} trailing)",
           R"({"clusters":[{"name":"a",}]})",
           "{\"clusters\":[{\"name\":\"\xff\"}]}",
       }) {
    SCOPED_TRACE(body);
    ExpectSameClusters(body, "p");
  }
}

TEST(ListReaderTest, GkeOperationListsReadAlike) {
  for (const char* body : {
           R"({"operations":[{"name":"operation-123","zone":"us-east5","operationType":"CREATE_NODE_POOL","status":"RUNNING",
               "selfLink":"https://container.googleapis.com/v1/projects/123456/locations/us-east5/operations/operation-123",
               "targetLink":"https://container.googleapis.com/v1/projects/123456/locations/us-east5/clusters/c/nodePools/np"}]})",
           R"({"operations":[{"name":"o","status":"DONE","location":"l",
               "error":{"code":8,"message":"Resource exhausted: GCE_STOCKOUT: no capacity in us-east5-b"}}]})",
           R"({"operations":[{"name":"o","status":"DONE","location":"l","error":{"code":8,"message":"out of resources"},
               "nodepoolConditions":[{"code":"GCE_STOCKOUT","message":"stockout","canonicalCode":"RESOURCE_EXHAUSTED"}]}]})",
           R"({"operations":[{"name":"o1","status":"DONE","location":"l"},{"name":"o2","status":"RUNNING","location":"l"}]})",
           // The first telling condition, node pools' first; the error's details before both.
           R"({"operations":[{"name":"o","status":"DONE","error":{"code":8},
               "clusterConditions":[{"code":"QUOTA_EXCEEDED","message":"cq"}],
               "nodepoolConditions":[5,{"code":"UNKNOWN","message":1},{"code":"GCE_STOCKOUT","message":"np"},{"code":7}]}]})",
           R"({"operations":[{"name":"o","status":"DONE","error":{"code":8,"message":"m",
               "details":[5,{"reason":null},{"@type":"x","reason":"RATE"},{"reason":"LATER"}]},
               "nodepoolConditions":[{"code":5}],"clusterConditions":{}}]})",
           R"({"operations":[{"name":"o","status":"DONE","error":{"code":"9"},"statusMessage":"failed: ZONE_RESOURCE_POOL_EXHAUSTED"}]})",
           R"({"operations":[{"name":"o","selfLink":"https://container.googleapis.com/v1/projects/sp/zones/z1/operations/o"}]})",
           R"({"operations":[{"name":"o","location":"l","zone":5}]})",
           R"({"operations":[{"name":"o","zone":5}]})",
           R"({"operations":[{"name":"o","statusMessage":5}]})",
           R"({"operations":[{"name":"o","status":"DONE","error":{"code":1},"nodepoolConditions":[{"code":"X","message":5}]}]})",
           R"({"operations":[5]})",
           R"({"operations":{}})",
           R"({})",
           "",
           "[]",
           R"({"operations":[)",
       }) {
    SCOPED_TRACE(body);
    testing::ExpectSameGkeOperations(body, "p");
    testing::ExpectSameGkeOperations(body, "");
  }
}

// An aggregated page of `field` with one scope per entry of `scopes`.
std::string Page(const std::string& field, const std::vector<std::pair<std::string, json>>& scopes,
                 const json& extra = json::object()) {
  // Written by hand so the scopes keep this order (a json object would sort them).
  std::string items;
  for (const auto& [scope, list] : scopes)
    items += (items.empty() ? "" : ",") + json(scope).dump() + ":" + json{{field, list}}.dump();
  std::string out = R"({"kind":"compute#aggregatedList","items":{)" + items + "}";
  for (const auto& [k, v] : extra.items()) out += "," + json(k).dump() + ":" + v.dump();
  return out + "}";
}

TEST(ListReaderTest, InstanceTemplatePagesReadAlike) {
  InstanceTemplate t;
  t.name = "tmpl";
  t.description = kComputeMarker;
  t.machine_type = "tpu7x-standard-4t";
  t.provisioning_model = "RESERVATION_BOUND";
  t.reservation = "projects/o/reservations/r";
  t.source_image = "projects/cos-cloud/global/images/family/cos-stable";
  t.subnetwork = "projects/p/regions/r/subnetworks/s";
  t.boot_disk_size_gb = 100;
  t.disk_type = "hyperdisk-balanced";
  t.service_accounts = {"sa@p", "sb@p"};
  t.network_tags = {"a", "b"};
  t.metadata = {{"startup-script", "#!/bin/sh\necho \"hi\"\n"}, {"kube-labels", "a=b,c=d"}};
  t.self_link = "https://compute.googleapis.com/compute/v1/projects/p/global/instanceTemplates/tmpl";
  t.on_host_maintenance = "TERMINATE";
  t.instance_termination_action = "DELETE";
  json full = InstanceTemplateToJson(t);
  json data_first = full;  // a data disk before the boot disk, initializeParams before `boot`
  data_first["properties"]["disks"] = json::parse(R"([
      {"type":"PERSISTENT","initializeParams":{"diskSizeGb":"500"}},
      {"initializeParams":{"diskSizeGb":"100","sourceImage":"img"},"boot":true},
      {"boot":"not read: after the boot disk"}])");
  const std::vector<std::string> bodies = {
      Page("instanceTemplates", {{"global", {full, data_first}}, {"regions/us-east5", json::array()}},
           {{"nextPageToken", "tok"}}),
      Page("instanceTemplates", {{"regions/b", {full}}, {"global", {data_first}}, {"regions/a", {full}}}),
      Page("instanceTemplates", {{"global", json::parse(R"([
          {"name":"one-disk","properties":{"disks":[{"initializeParams":{"diskSizeGb":7}}]}},
          {"name":"no-boot","properties":{"disks":[{"initializeParams":{"diskSizeGb":7}},{"autoDelete":true}]}},
          {"name":"odd-disks","properties":{"disks":[5,{"boot":true,"initializeParams":{"diskType":"pd-ssd"}}]}},
          {"name":"one-odd-disk","properties":{"disks":[5]}},
          {"name":"nics","properties":{"networkInterfaces":[7,{"subnetwork":"s"}]}},
          {"name":"nics2","properties":{"networkInterfaces":[{"subnetwork":"s1"},{"subnetwork":5}]}},
          {"name":"sas","properties":{"serviceAccounts":[1,{"email":""},{"email":"e"}],"tags":{"items":[]}}},
          {"name":"md","properties":{"metadata":{"items":[1,{"key":"k"},{"key":"k","value":"last"}]}}},
          {"name":"aff","properties":{"reservationAffinity":{"values":[]},"scheduling":{"provisioningModel":"SPOT"}}}
      ])")}}),
      Page("instanceTemplates", {{"global", json::parse(R"([{"name":"x","properties":{"disks":[{"boot":true,"initializeParams":{"diskSizeGb":"x"}}]}}])")}}),
      Page("instanceTemplates", {{"global", json::parse(R"([{"name":"x","properties":{"disks":[{"boot":"yes"},{"boot":true}]}}])")}}),
      Page("instanceTemplates", {{"global", json::parse(R"([{"name":"x","properties":{"disks":[{"boot":true},{"boot":"not read"}]}}])")}}),
      Page("instanceTemplates", {{"global", json::parse(R"([{"name":"x","properties":{"disks":[{"boot":false,"initializeParams":{"diskSizeGb":"x"}},{"boot":true}]}}])")}}),
      Page("instanceTemplates", {{"global", json::parse(R"([{"name":"x","properties":{"metadata":{"items":[{"key":"k","value":1}]}}}])")}}),
      Page("instanceTemplates", {{"global", json::parse(R"([5])")}}),
      Page("instanceTemplates", {{"zones/b", json::parse(R"([{"name":1}])")}, {"zones/a", json::parse(R"([{"description":2}])")}}),
      Page("instanceTemplates", {{"global", {full}}}, {{"unreachables", {"regions/x", "zones/y"}}}),
      Page("instanceTemplates", {{"global", {full}}}, {{"unreachables", json::array()}, {"nextPageToken", 5}}),
      Page("instanceTemplates", {{"global", json::parse(R"([{"name":1}])")}}, {{"unreachables", {"zones/y"}}}),
      R"({"items":{"global":{"warning":{"code":"NO_RESULTS_ON_PAGE"}},"regions/r":5,"zones/z":{"instanceTemplates":{}}}})",
      R"({"items":[]})",
      R"({"items":{"global":{"instanceTemplates":[{"name":"first"}]},"global":{"instanceTemplates":[{"name":"second"}]}}})",
      R"([1,2])",
      "",
      R"({"items":{"global":{"instanceTemplates":[{"name":"x"}]}})",
      R"({"items":{}} {})",
  };
  for (const auto& body : bodies) {
    SCOPED_TRACE(body);
    ExpectSamePage(body, testing::ReferenceInstanceTemplates(body),
                   [](std::string& b, auto* out) { return ReadInstanceTemplatePage(b, out); });
  }
}

TEST(ListReaderTest, GroupPolicyReservationAndOperationPagesReadAlike) {
  InstanceGroupManager m;
  m.name = "slice-0";
  m.zone = "https://www.googleapis.com/compute/v1/projects/p/zones/us-east5-a";
  m.description = kComputeMarker;
  m.instance_template = "projects/p/global/instanceTemplates/t";
  m.base_instance_name = "slice-0";
  m.target_size = 16;
  m.target_size_policy_mode = "BULK";
  m.workload_policy = "projects/p/regions/us-east5/resourcePolicies/wp";
  m.status = "STABLE";
  m.self_link = "https://www.googleapis.com/compute/v1/projects/p/zones/us-east5-a/instanceGroupManagers/slice-0";
  json mig = InstanceGroupManagerToJson(m);
  mig["currentActions"] = {{"creating", 2}, {"creatingWithoutRetries", "1"}, {"none", 13}, {"verifying", 0}};
  json no_zone = mig;
  no_zone.erase("zone");
  for (const auto& body : std::vector<std::string>{
           Page("instanceGroupManagers", {{"zones/us-east5-b", {no_zone}}, {"zones/us-east5-a", {mig, no_zone}}}),
           Page("instanceGroupManagers", {{"zones/z", json::parse(R"([{"name":"g","status":{"isStable":false}},{"name":"h","status":{}}])")}}),
           Page("instanceGroupManagers", {{"zones/z", json::parse(R"([{"name":"g","targetSize":"x"}])")}}),
           Page("instanceGroupManagers", {{"zones/z", json::parse(R"([{"name":"g","currentActions":{"deleting":[]}}])")}}),
           Page("instanceGroupManagers", {{"zones/z", json::parse(R"([{"name":"g","status":{"isStable":"no"}}])")}}),
       }) {
    SCOPED_TRACE(body);
    ExpectSamePage(body, testing::ReferenceInstanceGroupManagers(body),
                   [](std::string& b, auto* out) { return ReadInstanceGroupManagerPage(b, out); });
  }

  WorkloadPolicy wp;
  wp.name = "wp";
  wp.region = "https://compute.googleapis.com/compute/v1/projects/p/regions/us-east5";
  wp.type = "HIGH_THROUGHPUT";
  wp.accelerator_topology = "4x4x4";
  wp.accelerator_topology_mode = "PROVISION_ONLY";
  wp.description = kComputeMarker;
  wp.status = "READY";
  wp.self_link = "s";
  json policy = WorkloadPolicyToJson(wp);
  json regionless = policy;
  regionless.erase("region");
  for (const auto& body : std::vector<std::string>{
           Page("resourcePolicies", {{"regions/us-west1", {regionless}}, {"regions/us-east5", {policy}}}),
           // Not workload policies: skipped, whatever their other fields hold.
           Page("resourcePolicies", {{"regions/r", json::parse(R"([5,{"name":1,"snapshotSchedulePolicy":{}},
               {"name":"w","workloadPolicy":"x"},{"name":"w2","workloadPolicy":null},{"workloadPolicy":{"type":"HIGH_THROUGHPUT"}}])")}}),
           Page("resourcePolicies", {{"regions/r", json::parse(R"([{"name":1,"workloadPolicy":{}}])")}}),
           Page("resourcePolicies", {{"regions/r", json::parse(R"([{"name":"n","workloadPolicy":{"acceleratorTopology":4}}])")}}),
       }) {
    SCOPED_TRACE(body);
    ExpectSamePage(body, testing::ReferenceWorkloadPolicies(body),
                   [](std::string& b, auto* out) { return ReadWorkloadPolicyPage(b, out); });
  }

  for (const auto& body : std::vector<std::string>{
           Page("reservations", {{"zones/us-central1-a", json::parse(R"([{
               "name":"r","zone":"https://www.googleapis.com/compute/v1/projects/owner/zones/us-central1-a",
               "selfLink":"https://www.googleapis.com/compute/v1/projects/owner/zones/us-central1-a/reservations/r",
               "status":"READY","specificReservationRequired":true,
               "specificReservation":{"count":"16","inUseCount":4,"instanceProperties":{"machineType":"tpu7x-standard-4t"}},
               "shareSettings":{"shareType":"SPECIFIC_PROJECTS","projectMap":{"proj-y":{"projectId":"proj-y"},"proj-x":{}}},
               "deploymentType":"DENSE","resourceStatus":{"reservationBlockCount":2}},
               {"name":"bare","specificReservation":{"count":2}}])")}}),
           Page("reservations", {{"zones/z", json::parse(R"([{"specificReservation":{"count":"many"}}])")}}),
           Page("reservations", {{"zones/z", json::parse(R"([{"shareSettings":{"projectMap":[]}}])")}}),
       }) {
    SCOPED_TRACE(body);
    ExpectSamePage(body, testing::ReferenceReservations(body, "p"),
                   [](std::string& b, auto* out) { return ReadReservationPage(b, "p", out); });
  }

  const std::string ops = Page("operations", {
      {"zones/us-east5-a", json::parse(R"([{"kind":"compute#operation","name":"o1","operationType":"insert",
          "status":"RUNNING","zone":"https://www.googleapis.com/compute/v1/projects/p/zones/us-east5-a","targetLink":"t"},
          {"name":"o2","status":"DONE","zone":"projects/p/zones/us-east5-a","httpErrorStatusCode":409,
           "httpErrorMessage":"CONFLICT","error":{"errors":[{"code":"RESOURCE_ALREADY_EXISTS","message":"exists"}]}},
          {"name":"o3","status":"DONE","error":{"errors":[{"code":"ZONE_RESOURCE_POOL_EXHAUSTED"}]},"httpErrorMessage":"SERVICE UNAVAILABLE"},
          {"name":"o4","status":"DONE","error":{"errors":[]}},
          {"name":"o5","status":"PENDING","selfLink":"https://www.googleapis.com/compute/v1/projects/other/global/operations/o5"}])")},
      {"regions/us-east5", json::parse(R"([{"name":"o6","status":"RUNNING","region":"projects/p/regions/us-east5"}])")},
      {"global", json::parse(R"([{"name":"o7","status":"RUNNING"}])")}});
  for (bool running : {false, true}) {
    SCOPED_TRACE(running);
    ExpectSamePage(ops, testing::ReferenceComputeOperations(ops, "p", running),
                   [&](std::string& b, auto* out) { return ReadComputeOperationPage(b, "p", running, out); });
    ExpectSamePage(ops, testing::ReferenceComputeOperations(ops, "", running),
                   [&](std::string& b, auto* out) { return ReadComputeOperationPage(b, "", running, out); });
  }
  for (const auto& body : std::vector<std::string>{
           Page("operations", {{"zones/z", json::parse(R"([{"name":"o","status":"DONE","error":{},"httpErrorMessage":5}])")}}),
           Page("operations", {{"zones/z", json::parse(R"([{"name":"o","status":"DONE","error":{"errors":[{"message":"m"}]},"httpErrorMessage":5}])")}}),
           Page("operations", {{"zones/z", json::parse(R"([{"name":"o","httpErrorStatusCode":"x"}])")}}),
       }) {
    SCOPED_TRACE(body);
    ExpectSamePage(body, testing::ReferenceComputeOperations(body, "p", false),
                   [](std::string& b, auto* out) { return ReadComputeOperationPage(b, "p", false, out); });
  }
}

}  // namespace
}  // namespace tpu::cloud
