// GKE wire mapping: node pool round trips, the exact request bodies (create,
// update wrappers, setSize/Autoscaling/Management), cluster lists with pools
// embedded, and operations with their errors.
#include "cloud/gke_wire.h"

#include <gtest/gtest.h>

namespace tpu::cloud {
namespace {

using nlohmann::json;

NodePool FullPool() {
  NodePool p;
  p.name = "train-0";
  p.machine_type = "ct6e-standard-4t";
  p.disk_size_gb = 200;
  p.disk_type = "pd-balanced";
  p.image_type = "COS_CONTAINERD";
  p.service_account = "sa@p.iam.gserviceaccount.com";
  p.oauth_scopes = std::vector<std::string>{"https://www.googleapis.com/auth/cloud-platform"};
  p.labels = StringMap{{"team", "ml"}};
  p.taints = std::vector<NodeTaint>{{"google.com/tpu", "present", "NO_SCHEDULE"}};
  p.resource_labels = StringMap{{kManagedLabel, "true"}, {kTargetHashLabel, "abc123"}};
  p.tags = std::vector<std::string>{"tpu"};
  p.metadata = StringMap{{"disable-legacy-endpoints", "true"}};
  p.spot = true;
  p.reservation_affinity = ReservationAffinity{"SPECIFIC_RESERVATION", "compute.googleapis.com/reservation-name", {"res-1"}};
  p.placement_policy = PlacementPolicy{"COMPACT", "4x4", ""};
  p.node_count = 4;
  p.autoscaling = NodePoolAutoscaling{false, 0, 0, ""};
  p.management = NodeManagement{true, false};
  p.version = "1.31.1-gke.100";
  p.locations = {"us-east5-b"};
  return p;
}

void ExpectSamePool(const NodePool& a, const NodePool& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.machine_type, b.machine_type);
  EXPECT_EQ(a.disk_size_gb, b.disk_size_gb);
  EXPECT_EQ(a.disk_type, b.disk_type);
  EXPECT_EQ(a.image_type, b.image_type);
  EXPECT_EQ(a.service_account, b.service_account);
  EXPECT_EQ(a.oauth_scopes, b.oauth_scopes);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.taints, b.taints);
  EXPECT_EQ(a.resource_labels, b.resource_labels);
  EXPECT_EQ(a.tags, b.tags);
  EXPECT_EQ(a.metadata, b.metadata);
  EXPECT_EQ(a.spot, b.spot);
  EXPECT_EQ(a.flex_start, b.flex_start);
  EXPECT_EQ(a.reservation_affinity, b.reservation_affinity);
  EXPECT_EQ(a.placement_policy, b.placement_policy);
  EXPECT_EQ(a.node_count, b.node_count);
  EXPECT_EQ(a.autoscaling, b.autoscaling);
  EXPECT_EQ(a.management, b.management);
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.locations, b.locations);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.self_link, b.self_link);
}

TEST(GkeWireTest, NodePoolRoundTrip) {
  NodePool p = FullPool();
  p.status = "RUNNING";
  p.self_link = "https://container.googleapis.com/v1/projects/p/locations/l/clusters/c/nodePools/train-0";
  auto back = NodePoolFromJson(NodePoolToJson(p));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSamePool(p, *back);
}

TEST(GkeWireTest, CreateBodyUsesProtoFieldNames) {
  json body = CreateNodePoolBody(FullPool());
  ASSERT_TRUE(body.contains("nodePool"));
  const json& np = body["nodePool"];
  EXPECT_EQ(np["name"], "train-0");
  EXPECT_EQ(np["initialNodeCount"], 4);
  EXPECT_EQ(np["config"]["machineType"], "ct6e-standard-4t");
  EXPECT_EQ(np["config"]["diskSizeGb"], 200);
  EXPECT_EQ(np["config"]["spot"], true);
  EXPECT_EQ(np["config"]["resourceLabels"][kManagedLabel], "true");
  EXPECT_EQ(np["config"]["taints"][0], json({{"key", "google.com/tpu"}, {"value", "present"}, {"effect", "NO_SCHEDULE"}}));
  EXPECT_EQ(np["config"]["reservationAffinity"]["consumeReservationType"], "SPECIFIC_RESERVATION");
  EXPECT_EQ(np["placementPolicy"], json({{"type", "COMPACT"}, {"tpuTopology", "4x4"}}));
  EXPECT_EQ(np["management"], json({{"autoRepair", true}, {"autoUpgrade", false}}));
  EXPECT_FALSE(np.contains("status"));
  EXPECT_FALSE(np.contains("selfLink"));
}

TEST(GkeWireTest, UnsetFieldsAreNotSent) {
  NodePool p;
  p.name = "small";
  p.machine_type = "ct5lp-hightpu-1t";
  p.node_count = 1;
  json np = NodePoolToJson(p);
  EXPECT_EQ(np, json({{"name", "small"}, {"config", {{"machineType", "ct5lp-hightpu-1t"}}}, {"initialNodeCount", 1}}));
}

TEST(GkeWireTest, Tpu7xPlacementWithoutType) {
  auto p = NodePoolFromJson(json::parse(R"({"name":"x","placementPolicy":{"tpuTopology":"4x4x4","policyName":"wp-1"}})"));
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->placement_policy.has_value());
  EXPECT_EQ(p->placement_policy->type, "");
  EXPECT_EQ(p->placement_policy->policy_name, "wp-1");
  EXPECT_EQ(p->placement_policy->tpu_topology, "4x4x4");
}

TEST(GkeWireTest, UpdateBodyUsesWrapperObjects) {
  NodePoolUpdate u;
  u.labels = StringMap{{"a", "1"}};
  u.taints = std::vector<NodeTaint>{};
  u.resource_labels = StringMap{{kManagedLabel, "true"}};
  u.tags = std::vector<std::string>{"t1", "t2"};
  EXPECT_EQ(UpdateNodePoolBody(u), json::parse(R"({
    "labels": {"labels": {"a": "1"}},
    "taints": {"taints": []},
    "resourceLabels": {"labels": {"tpu-provisioner-managed": "true"}},
    "tags": {"tags": ["t1", "t2"]}})"));
  NodePoolUpdate v;
  v.node_version = "1.31.2-gke.1";
  EXPECT_EQ(UpdateNodePoolBody(v), json({{"nodeVersion", "1.31.2-gke.1"}}));
  EXPECT_TRUE(NodePoolUpdate{}.empty());
  // Disks migrate in place; disk_size_gb is an int64, a string in proto3 JSON.
  NodePoolUpdate disk;
  disk.disk_size_gb = 200;
  disk.disk_type = "pd-ssd";
  EXPECT_EQ(UpdateNodePoolBody(disk), json({{"diskSizeGb", "200"}, {"diskType", "pd-ssd"}}));
  NodePoolUpdate zones;
  zones.locations = std::vector<std::string>{"us-east5-a", "us-east5-b"};
  EXPECT_FALSE(zones.empty());
  EXPECT_EQ(UpdateNodePoolBody(zones), json({{"locations", {"us-east5-a", "us-east5-b"}}}));
}

TEST(GkeWireTest, SetBodies) {
  EXPECT_EQ(SetNodePoolSizeBody(3), json({{"nodeCount", 3}}));
  EXPECT_EQ(SetNodePoolAutoscalingBody({true, 1, 5, ""}),
            json::parse(R"({"autoscaling":{"enabled":true,"minNodeCount":1,"maxNodeCount":5}})"));
  EXPECT_EQ(SetNodePoolAutoscalingBody({false, 0, 0, ""}), json::parse(R"({"autoscaling":{"enabled":false}})"));
  // A multi-host slice scales between 0 and its VMs, in whichever zone has them.
  EXPECT_EQ(SetNodePoolAutoscalingBody({true, 0, 16, "ANY"}),
            json::parse(R"({"autoscaling":{"enabled":true,"minNodeCount":0,"maxNodeCount":16,"locationPolicy":"ANY"}})"));
  EXPECT_EQ(SetNodePoolManagementBody({true, false}),
            json::parse(R"({"management":{"autoRepair":true,"autoUpgrade":false}})"));
}

TEST(GkeWireTest, ClusterListWithEmbeddedPools) {
  auto clusters = ClusterListFromJson(json::parse(R"({"clusters":[
    {"name":"a","location":"us-east5","status":"RUNNING","releaseChannel":{"channel":"REGULAR"},
     "selfLink":"https://container.googleapis.com/v1/projects/p1/locations/us-east5/clusters/a",
     "nodePools":[{"name":"np1","config":{"machineType":"ct6e-standard-4t","diskSizeGb":100},"initialNodeCount":2,"status":"RUNNING"},
                  {"name":"np2","status":"ERROR","statusMessage":"GCE_STOCKOUT"}]},
    {"name":"b","zone":"us-central1-a","status":"PROVISIONING","releaseChannel":{}}]})"), "p1");
  ASSERT_TRUE(clusters.ok()) << clusters.status().ToString();
  ASSERT_EQ(clusters->size(), 2u);
  const Cluster& a = (*clusters)[0];
  EXPECT_EQ(a.project, "p1");
  EXPECT_EQ(a.location, "us-east5");
  EXPECT_EQ(a.release_channel, "REGULAR");
  EXPECT_EQ((*clusters)[1].release_channel, "") << "no channel";
  ASSERT_EQ(a.node_pools.size(), 2u);
  EXPECT_EQ(a.node_pools[0].node_count, 2);
  EXPECT_EQ(a.node_pools[0].disk_size_gb, 100);
  EXPECT_EQ(a.node_pools[1].status_message, "GCE_STOCKOUT");
  EXPECT_EQ((*clusters)[1].location, "us-central1-a");
  EXPECT_TRUE((*clusters)[1].node_pools.empty());
}

TEST(GkeWireTest, MissingZonesRefusesAPartialList) {
  auto r = ClusterListFromJson(json::parse(R"({"clusters":[],"missingZones":["us-east5-a"]})"), "p");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kUnavailable);
}

TEST(GkeWireTest, WrongTypesAreErrorsWithTheField) {
  auto r = NodePoolFromJson(json::parse(R"({"name":"x","config":{"diskSizeGb":"big"}})"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "node pool: field diskSizeGb: expected an integer");
  auto c = ClusterListFromJson(json::parse(R"({"clusters":[{"name":"a","nodePools":{}}]})"), "p");
  ASSERT_FALSE(c.ok());
}

TEST(GkeWireTest, OperationRunningAndDone) {
  auto op = GkeOperationFromJson(json::parse(R"({
    "name":"operation-123","zone":"us-east5","operationType":"CREATE_NODE_POOL","status":"RUNNING",
    "selfLink":"https://container.googleapis.com/v1/projects/123456/locations/us-east5/operations/operation-123",
    "targetLink":"https://container.googleapis.com/v1/projects/123456/locations/us-east5/clusters/c/nodePools/np"})"), "p");
  ASSERT_TRUE(op.ok());
  EXPECT_EQ(op->api, Operation::Api::kGke);
  EXPECT_EQ(op->project, "p");  // the caller's id, not the number in selfLink
  EXPECT_EQ(op->location, "us-east5");
  EXPECT_EQ(op->operation_type, "CREATE_NODE_POOL");
  EXPECT_FALSE(op->done());
  EXPECT_FALSE(op->failed());
  auto back = GkeOperationFromJson(GkeOperationToJson(*op), "p");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->name, op->name);
  EXPECT_EQ(back->target_link, op->target_link);
}

TEST(GkeWireTest, OperationStockoutFromErrorOrConditions) {
  auto a = GkeOperationFromJson(json::parse(R"({"name":"o","status":"DONE","location":"l",
    "error":{"code":8,"message":"Resource exhausted: GCE_STOCKOUT: no capacity in us-east5-b"}})"), "p");
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->failed());
  EXPECT_EQ(a->error_code, 8);
  EXPECT_EQ(a->error_reason, "GCE_STOCKOUT");
  auto b = GkeOperationFromJson(json::parse(R"({"name":"o","status":"DONE","location":"l",
    "error":{"code":8,"message":"out of resources"},
    "nodepoolConditions":[{"code":"GCE_STOCKOUT","message":"stockout","canonicalCode":"RESOURCE_EXHAUSTED"}]})"), "p");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->error_reason, "GCE_STOCKOUT");
  auto c = GkeOperationFromJson(json::parse(R"({"name":"o","status":"DONE","location":"l",
    "error":{"code":8,"message":"ZONE_RESOURCE_POOL_EXHAUSTED in zone"}})"), "p");
  EXPECT_EQ(c->error_reason, "ZONE_RESOURCE_POOL_EXHAUSTED");
  auto ok = GkeOperationFromJson(json::parse(R"({"name":"o","status":"DONE","location":"l"})"), "p");
  EXPECT_TRUE(ok->done());
  EXPECT_FALSE(ok->failed());
}

TEST(GkeWireTest, OperationList) {
  auto ops = GkeOperationListFromJson(json::parse(R"({"operations":[
    {"name":"o1","status":"DONE","location":"l"},{"name":"o2","status":"RUNNING","location":"l"}]})"), "p");
  ASSERT_TRUE(ops.ok());
  ASSERT_EQ(ops->size(), 2u);
  EXPECT_EQ((*ops)[1].name, "o2");
}

}  // namespace
}  // namespace tpu::cloud
