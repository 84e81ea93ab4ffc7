// GKE routes of the cloud emulator over HTTP: clusters, node pools, updates
// with wrapper objects, setSize/setAutoscaling/setManagement, operations,
// defaults, TPU validation and error bodies. Concurrency and the pool rules
// of issue 15 have their own files (gke_concurrency_test, gke_pool_rules_test).
#include "sim_test_util.h"

namespace tpu::sim::testing {
namespace {

using GkeTest = EmulatorTest;

TEST_F(GkeTest, CreateClusterRunsAnOperationAndListsAcrossLocations) {
  auto r = http_->Post("/v1/projects/p1/locations/europe-west4/clusters",
                       {{"cluster", {{"name", "c2"}, {"autopilot", {{"enabled", true}}}}}});
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["operationType"], "CREATE_CLUSTER");
  EXPECT_EQ(r.body["status"], "PENDING");
  EXPECT_TRUE(r.body["name"].get<std::string>().rfind("operation-", 0) == 0);
  WaitGke(r.body);
  auto c = http_->Get("/v1/projects/p1/locations/europe-west4/clusters/c2");
  EXPECT_EQ(c.body["status"], "RUNNING");
  EXPECT_EQ(c.body["locations"].size(), 3u);  // a regional cluster spans three zones

  CreatePool(V6ePool("tpu"));
  auto all = http_->Get("/v1/projects/p1/locations/-/clusters");
  ASSERT_EQ(all.status, 200);
  ASSERT_EQ(all.body["clusters"].size(), 2u);
  // Node pools are embedded, so one call refreshes a whole project.
  bool found = false;
  for (const auto& cl : all.body["clusters"])
    if (cl["name"] == "c1") found = cl["nodePools"][0]["name"] == "tpu";
  EXPECT_TRUE(found) << all.raw;
  EXPECT_EQ(http_->Get("/v1/projects/other/locations/-/clusters").body, json::object());

  auto dup = http_->Post("/v1/projects/p1/locations/europe-west4/clusters",
                         {{"cluster", {{"name", "c2"}, {"initialNodeCount", 1}}}});
  EXPECT_EQ(dup.status, 409);
}

TEST_F(GkeTest, DeleteClusterRemovesItsPools) {
  CreatePool(V6ePool("tpu"));
  auto del = http_->Delete("/v1/projects/p1/locations/us-central1-a/clusters/c1");
  ASSERT_EQ(del.status, 200) << del.raw;
  EXPECT_EQ(del.body["operationType"], "DELETE_CLUSTER");
  WaitGke(del.body);
  EXPECT_EQ(http_->Get("/v1/projects/p1/locations/us-central1-a/clusters/c1").status, 404);
}

TEST_F(GkeTest, NodePoolCreateFillsServerSideDefaults) {
  // Operations long enough that the GET right after the create finds the pool
  // still PROVISIONING however loaded the machine is.
  CloudEmulatorOptions slow = FastOptions();
  slow.op_latency_ms = {{"default", 1500}};
  StartWith(slow);
  auto r = http_->Post(Pools(), {{"nodePool", V6ePool("tpu")}});
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["operationType"], "CREATE_NODE_POOL");
  EXPECT_EQ(r.body["targetLink"],
            "https://container.googleapis.com/v1/projects/p1/locations/us-central1-a/clusters/c1/nodePools/tpu");
  auto p = http_->Get(Pools() + "/tpu").body;
  EXPECT_EQ(p["status"], "PROVISIONING");
  WaitGke(r.body);
  p = http_->Get(Pools() + "/tpu").body;
  EXPECT_EQ(p["status"], "RUNNING");
  EXPECT_EQ(p["config"]["diskSizeGb"], 100);
  EXPECT_EQ(p["config"]["diskType"], "pd-balanced");
  EXPECT_EQ(p["config"]["imageType"], "COS_CONTAINERD");
  EXPECT_EQ(p["config"]["oauthScopes"].size(), 6u);
  EXPECT_EQ(p["management"], json({{"autoUpgrade", true}, {"autoRepair", true}}));
  EXPECT_EQ(p["upgradeSettings"]["maxSurge"], 1);
  EXPECT_EQ(p["instanceGroupUrls"].size(), 1u);
  EXPECT_EQ(p["locations"], json::array({"us-central1-a"}));
  EXPECT_EQ(p["selfLink"],
            "https://container.googleapis.com/v1/projects/p1/locations/us-central1-a/clusters/c1/nodePools/tpu");
  EXPECT_FALSE(p["version"].get<std::string>().empty());
  EXPECT_EQ(p["placementPolicy"], json({{"type", "COMPACT"}, {"tpuTopology", "4x4"}}));
  auto list = http_->Get(Pools());
  EXPECT_EQ(list.body["nodePools"].size(), 1u);
  EXPECT_FALSE(list.body.contains("nextPageToken"));  // v1 node pool lists have no paging
}

TEST_F(GkeTest, AlreadyExistsAndNotFoundBodies) {
  CreatePool(V6ePool("tpu"));
  auto dup = http_->Post(Pools(), {{"nodePool", V6ePool("tpu")}});
  EXPECT_EQ(dup.status, 409);
  EXPECT_EQ(dup.body["error"]["code"], 409);
  EXPECT_EQ(dup.body["error"]["status"], "ALREADY_EXISTS");
  EXPECT_EQ(dup.body["error"]["message"],
            "Already exists: projects/p1/locations/us-central1-a/clusters/c1/nodePools/tpu.");
  EXPECT_EQ(dup.body["error"]["errors"][0]["reason"], "alreadyExists");
  EXPECT_EQ(dup.body["error"]["errors"][0]["domain"], "global");

  auto missing = http_->Get(Pools() + "/nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body["error"]["status"], "NOT_FOUND");
  EXPECT_EQ(missing.body["error"]["message"],
            "Not found: projects/p1/locations/us-central1-a/clusters/c1/nodePools/nope.");
  EXPECT_EQ(http_->Get(Pools("nocluster")).status, 404);
  EXPECT_EQ(http_->Post(Pools() + "/nope:setSize", {{"nodeCount", 1}}).status, 404);
  EXPECT_EQ(http_->Get("/v1/projects/p1/locations/us-central1-a/operations/operation-1-0").status, 404);
}

TEST_F(GkeTest, OperationsMovePendingRunningDone) {
  CloudEmulatorOptions o = FastOptions();
  o.op_latency_ms = {{"default", 400}};
  StartWith(o);
  auto r = http_->Post(Pools(), {{"nodePool", V6ePool("tpu")}});
  EXPECT_EQ(r.body["status"], "PENDING");
  std::set<std::string> seen;
  PollUntil([&] {
    auto op = http_->Get(Op(r.body)).body;
    seen.insert(op["status"].get<std::string>());
    return op["status"] == "DONE";
  });
  EXPECT_TRUE(seen.count("RUNNING"));
  EXPECT_TRUE(seen.count("DONE"));
  auto op = http_->Get("/v1/projects/p1/locations/-/operations/" + r.body["name"].get<std::string>());
  EXPECT_EQ(op.status, 200);
  EXPECT_TRUE(op.body.contains("endTime"));
}

TEST_F(GkeTest, UpdateWithWrapperObjectsReplacesWholeSets) {
  json pool = V6ePool("tpu");
  pool["config"]["labels"] = {{"a", "1"}, {"b", "2"}};
  pool["config"]["taints"] = json::array({{{"key", "k"}, {"value", "v"}, {"effect", "NO_SCHEDULE"}}});
  CreatePool(pool);
  auto r = http_->Put(Pools() + "/tpu",
                      {{"labels", {{"labels", {{"c", "3"}}}}},
                       {"taints", {{"taints", json::array()}}},
                       {"resourceLabels", {{"labels", {{"tpu-provisioner-managed", "true"}}}}},
                       {"tags", {{"tags", {"t1"}}}}});
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["operationType"], "UPGRADE_NODES");
  EXPECT_EQ(http_->Get(Pools() + "/tpu").body["status"], "RECONCILING");
  WaitGke(r.body);
  auto p = http_->Get(Pools() + "/tpu").body;
  EXPECT_EQ(p["status"], "RUNNING");
  EXPECT_EQ(p["config"]["labels"], json({{"c", "3"}}));
  EXPECT_FALSE(p["config"].contains("taints"));
  EXPECT_EQ(p["config"]["resourceLabels"], json({{"tpu-provisioner-managed", "true"}}));
  EXPECT_EQ(p["config"]["tags"], json::array({"t1"}));
  auto bad = http_->Put(Pools() + "/tpu", {{"machineType", "ct6e-standard-8t"}});
  EXPECT_EQ(bad.status, 400);
}

TEST_F(GkeTest, SetSizeAutoscalingManagement) {
  CreatePool({{"name", "single"}, {"initialNodeCount", 2}, {"config", {{"machineType", "ct6e-standard-4t"}}}});
  auto r = http_->Post(Pools() + "/single:setSize", {{"nodeCount", 5}});
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["operationType"], "SET_NODE_POOL_SIZE");
  WaitGke(r.body);
  // As in GKE, initialNodeCount keeps the creation value.
  EXPECT_EQ(http_->Get(Pools() + "/single").body["initialNodeCount"], 2);

  r = http_->Post(Pools() + "/single:setAutoscaling",
                  {{"autoscaling", {{"enabled", true}, {"minNodeCount", 1}, {"maxNodeCount", 4}}}});
  ASSERT_EQ(r.status, 200) << r.raw;
  WaitGke(r.body);
  EXPECT_EQ(http_->Get(Pools() + "/single").body["autoscaling"]["maxNodeCount"], 4);

  r = http_->Post(Pools() + "/single:setManagement",
                  {{"management", {{"autoUpgrade", true}, {"autoRepair", false}}}});
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["operationType"], "SET_NODE_POOL_MANAGEMENT");
  WaitGke(r.body);
  EXPECT_EQ(http_->Get(Pools() + "/single").body["management"]["autoRepair"], false);
}

TEST_F(GkeTest, MultiHostTpuPoolsRejectSetSize) {
  CreatePool(V6ePool("slice", "4x4", 4));
  auto r = http_->Post(Pools() + "/slice:setSize", {{"nodeCount", 8}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["error"]["status"], "INVALID_ARGUMENT");
  auto a = http_->Post(Pools() + "/slice:setAutoscaling", {{"autoscaling", {{"enabled", true}}}});
  EXPECT_EQ(a.status, 400);
}

TEST_F(GkeTest, DeleteLeavesPoolStoppingUntilDone) {
  CreatePool(V6ePool("tpu"));
  auto r = http_->Delete(Pools() + "/tpu");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body["operationType"], "DELETE_NODE_POOL");
  EXPECT_EQ(http_->Get(Pools() + "/tpu").body["status"], "STOPPING");
  WaitGke(r.body);
  EXPECT_EQ(http_->Get(Pools() + "/tpu").status, 404);
}

TEST_F(GkeTest, TpuTopologyIsValidatedAgainstMachineType) {
  auto bad = http_->Post(Pools(), {{"nodePool", V6ePool("x", "3x3", 4)}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body["error"]["message"],
            "Invalid TPU topology \"3x3\" for machine type \"ct6e-standard-4t\".");
  // 4x4 of 4-chip VMs is 4 nodes, no other count.
  EXPECT_EQ(http_->Post(Pools(), {{"nodePool", V6ePool("x", "4x4", 2)}}).status, 400);
  json v5p = {{"name", "v5p"}, {"initialNodeCount", 16},
              {"config", {{"machineType", "ct5p-hightpu-4t"}}},
              {"placementPolicy", {{"type", "COMPACT"}, {"tpuTopology", "4x4x4"}}}};
  EXPECT_EQ(http_->Post(Pools(), {{"nodePool", v5p}}).status, 200);
  json cpu = {{"name", "cpu"}, {"initialNodeCount", 1}, {"config", {{"machineType", "e2-standard-4"}}},
              {"placementPolicy", {{"tpuTopology", "2x2"}}}};
  ASSERT_TRUE(emu_->EnsureCluster("p1", "us-central1-a", "c9").ok());
  EXPECT_EQ(http_->Post(Pools("c9"), {{"nodePool", cpu}}).status, 400);
}

TEST_F(GkeTest, Tpu7xPoolsReportPolicyNameAndTopologyWithoutType) {
  auto pol = http_->Post("/compute/v1/projects/p1/regions/us-central1/resourcePolicies",
                         {{"name", "wp-2x2x2"},
                          {"workloadPolicy", {{"type", "HIGH_THROUGHPUT"}, {"acceleratorTopology", "2x2x2"}}}});
  ASSERT_EQ(pol.status, 200) << pol.raw;
  json pool = {{"name", "v7"}, {"initialNodeCount", 2},
               {"config", {{"machineType", "tpu7x-standard-4t"}}},
               {"placementPolicy", {{"policyName", "wp-2x2x2"}}}};
  CreatePool(pool);
  auto p = http_->Get(Pools() + "/v7").body;
  EXPECT_EQ(p["placementPolicy"], json({{"policyName", "wp-2x2x2"}, {"tpuTopology", "2x2x2"}}));
  pool["name"] = "v7b";
  pool["placementPolicy"]["policyName"] = "missing";
  EXPECT_EQ(http_->Post(Pools(), {{"nodePool", pool}}).status, 400);
}

TEST_F(GkeTest, UnknownFieldsAndBadEnumsAreRejectedLikeTheRealApi) {
  json pool = V6ePool("tpu");
  pool["x"] = 1;
  auto r = http_->Post(Pools(), {{"nodePool", pool}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["error"]["status"], "INVALID_ARGUMENT");
  EXPECT_EQ(r.body["error"]["message"],
            "Invalid JSON payload received. Unknown name \"x\" at 'node_pool': Cannot find field.");
  pool.erase("x");
  pool["config"]["diskSizeGB"] = 100;
  r = http_->Post(Pools(), {{"nodePool", pool}});
  EXPECT_EQ(r.body["error"]["message"],
            "Invalid JSON payload received. Unknown name \"diskSizeGB\" at 'node_pool.config': Cannot find field.");
  pool["config"].erase("diskSizeGB");
  pool["placementPolicy"]["type"] = "SPREAD";
  r = http_->Post(Pools(), {{"nodePool", pool}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body["error"]["message"].get<std::string>().find("node_pool.placement_policy.type"),
            std::string::npos);
  auto top = http_->Post(Pools(), {{"pool", pool}});
  EXPECT_EQ(top.body["error"]["message"],
            "Invalid JSON payload received. Unknown name \"pool\": Cannot find field.");
  auto junk = http_->CallRaw("POST", Pools(), "{not json");
  EXPECT_EQ(junk.status, 400);
  EXPECT_EQ(http_->Put(Pools() + "/none", {{"labels", {{"lables", json::object()}}}}).status, 404);
}

TEST_F(GkeTest, BearerTokenIsRequired) {
  Http anonymous(emu_->endpoint(), "");
  auto r = anonymous.Get(Pools());
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.body["error"]["status"], "UNAUTHENTICATED");
  CloudEmulatorOptions o = FastOptions();
  o.required_token = "s3cret";
  StartWith(o);
  EXPECT_EQ(http_->Get(Pools()).status, 401);
  EXPECT_EQ(Http(emu_->endpoint(), "s3cret").Get(Pools()).status, 200);
}

}  // namespace
}  // namespace tpu::sim::testing
