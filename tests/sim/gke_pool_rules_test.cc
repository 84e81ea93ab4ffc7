// The node pool rules of the emulator that issue 15 corrected, each as the
// real API words it (docs/emulator.md names the public source of each):
// release channels refuse management.autoUpgrade false; multi-host TPU slices
// autoscale only as a whole, 0 ↔ their VM count; flex-start's requirements;
// in-place updates of disks and zones; clusters created with their pools.
#include "sim_test_util.h"

namespace tpu::sim::testing {
namespace {

class GkePoolRulesTest : public EmulatorTest {
 protected:
  static json Single(const std::string& name) {
    return {{"name", name}, {"initialNodeCount", 1}, {"config", {{"machineType", "ct6e-standard-4t"}}}};
  }
  // A v5p 4x4x4 slice: 16 VMs of ct5p-hightpu-4t, 64 chips.
  static json V5pSlice(const std::string& name, int nodes) {
    return {{"name", name}, {"initialNodeCount", nodes},
            {"config", {{"machineType", "ct5p-hightpu-4t"}}},
            {"placementPolicy", {{"type", "COMPACT"}, {"tpuTopology", "4x4x4"}}}};
  }
  static json Autoscaled(json pool, int min, int max) {
    pool["autoscaling"] = {{"enabled", true}, {"minNodeCount", min}, {"maxNodeCount", max},
                           {"locationPolicy", "ANY"}};
    return pool;
  }
  // A flex-start slice as xpk and Cluster Toolkit create one.
  static json FlexSlice(const std::string& name) {
    json p = Autoscaled(V5pSlice(name, 0), 0, 16);
    p["config"]["flexStart"] = true;
    p["config"]["reservationAffinity"] = {{"consumeReservationType", "NO_RESERVATION"}};
    p["management"] = {{"autoRepair", false}, {"autoUpgrade", true}};
    return p;
  }
  HttpResult Post(const json& pool, const std::string& cluster = "c1") {
    return http_->Post(Pools(cluster), {{"nodePool", pool}});
  }
  static void ExpectInvalid(const HttpResult& r, const std::string& message) {
    EXPECT_EQ(r.status, 400) << r.raw;
    EXPECT_EQ(r.body["error"]["status"], "INVALID_ARGUMENT") << r.raw;
    EXPECT_EQ(r.body["error"]["message"], message) << r.raw;
  }
};

TEST_F(GkePoolRulesTest, AReleaseChannelRefusesAutoUpgradeFalse) {
  EXPECT_EQ(http_->Get("/v1/projects/p1/locations/us-central1-a/clusters/c1").body["releaseChannel"],
            json({{"channel", "REGULAR"}}));
  json off = Single("off");
  off["management"] = {{"autoUpgrade", false}, {"autoRepair", true}};
  auto r = Post(off);
  ExpectInvalid(r, "Auto_upgrade cannot be false when release_channel REGULAR is set.");
  EXPECT_EQ(r.body["error"]["errors"][0]["reason"], "badRequest");
  // A management message without autoUpgrade is autoUpgrade false (proto3).
  json repair_only = Single("repair-only");
  repair_only["management"] = {{"autoRepair", false}};
  ExpectInvalid(Post(repair_only), "Auto_upgrade cannot be false when release_channel REGULAR is set.");
  // Auto-repair may still be turned off.
  json no_repair = Single("no-repair");
  no_repair["management"] = {{"autoRepair", false}, {"autoUpgrade", true}};
  CreatePool(no_repair);
  EXPECT_EQ(http_->Get(Pools() + "/no-repair").body["management"],
            json({{"autoRepair", false}, {"autoUpgrade", true}}));
  ExpectInvalid(http_->Post(Pools() + "/no-repair:setManagement",
                            {{"management", {{"autoUpgrade", false}, {"autoRepair", false}}}}),
                "Auto_upgrade cannot be false when release_channel REGULAR is set.");
  // Leaving management out gets GKE's defaults.
  CreatePool(Single("defaults"));
  EXPECT_EQ(http_->Get(Pools() + "/defaults").body["management"],
            json({{"autoRepair", true}, {"autoUpgrade", true}}));

  // Other channels say their name; a cluster without one takes autoUpgrade false.
  ASSERT_TRUE(emu_->EnsureCluster("p1", "us-central1-a", "stable", "STABLE").ok());
  ExpectInvalid(Post(off, "stable"), "Auto_upgrade cannot be false when release_channel STABLE is set.");
  ASSERT_TRUE(emu_->EnsureCluster("p1", "us-central1-a", "none", "").ok());
  EXPECT_EQ(http_->Get("/v1/projects/p1/locations/us-central1-a/clusters/none").body["releaseChannel"],
            json::object());
  EXPECT_EQ(Post(off, "none").status, 200);
}

TEST_F(GkePoolRulesTest, NewClustersGetTheConfiguredChannel) {
  CloudEmulatorOptions o = FastOptions();
  o.release_channel = "";
  StartWith(o);
  json off = Single("off");
  off["management"] = {{"autoUpgrade", false}, {"autoRepair", true}};
  EXPECT_EQ(Post(off).status, 200);
  // A cluster create that names its channel gets it, and checks its pools against it.
  auto c = http_->Post("/v1/projects/p1/locations/us-central1-a/clusters",
                       {{"cluster", {{"name", "rapid"}, {"releaseChannel", {{"channel", "RAPID"}}},
                                     {"nodePools", json::array({off})}}}});
  ExpectInvalid(c, "Auto_upgrade cannot be false when release_channel RAPID is set.");
  EXPECT_EQ(http_->Get("/v1/projects/p1/locations/us-central1-a/clusters/rapid").status, 404);
}

TEST_F(GkePoolRulesTest, AMultiHostSliceAutoscalesAsAWholeFromZero) {
  emu_->SetZoneCapacity("us-central1-a", "tpu-v5p-slice", 0);  // nothing to take while at 0
  auto r = Post(Autoscaled(V5pSlice("zero", 0), 0, 16));
  ASSERT_EQ(r.status, 200) << r.raw;
  json done = WaitGke(r.body);
  EXPECT_FALSE(done.contains("error")) << done.dump();
  auto pool = http_->Get(Pools() + "/zero").body;
  EXPECT_EQ(pool["status"], "RUNNING");
  EXPECT_EQ(pool["autoscaling"]["maxNodeCount"], 16);
  ExpectInvalid(http_->Post(Pools() + "/zero:setSize", {{"nodeCount", 16}}),
                "Resizing a multi-host TPU slice node pool is not supported: its node count is "
                "fixed by its TPU topology.");

  const std::string wrong =
      "Invalid autoscaling for a multi-host TPU slice node pool: a slice of topology \"4x4x4\" "
      "scales as a whole between 0 and its 16 VMs, so the minimum must be 0 and the maximum 16 ";
  ExpectInvalid(Post(Autoscaled(V5pSlice("half", 0), 0, 8)), wrong + "(got 0 and 8).");
  ExpectInvalid(Post(Autoscaled(V5pSlice("floor", 0), 4, 16)), wrong + "(got 4 and 16).");
  ExpectInvalid(Post(Autoscaled(V5pSlice("part", 4), 0, 16)),
                "Invalid node count 4 for autoscaled TPU topology \"4x4x4\" of machine type "
                "\"ct5p-hightpu-4t\": must be 0 or 16.");
  json total = V5pSlice("total", 0);
  total["autoscaling"] = {{"enabled", true}, {"totalMinNodeCount", 0}, {"totalMaxNodeCount", 16}};
  EXPECT_EQ(Post(total).status, 200);
  // A fixed-size slice is still exactly its VM count.
  ExpectInvalid(Post(V5pSlice("eight", 8)),
                "Invalid node count 8 for TPU topology \"4x4x4\" of machine type "
                "\"ct5p-hightpu-4t\": must be 16.");
  // setAutoscaling takes a fixed slice to 0 ↔ 16, and nothing else.
  emu_->SetZoneCapacity("us-central1-a", "tpu-v5p-slice", -1);
  CreatePool(V5pSlice("fixed", 16));
  ExpectInvalid(http_->Post(Pools() + "/fixed:setAutoscaling",
                            {{"autoscaling", {{"enabled", true}, {"minNodeCount", 0}, {"maxNodeCount", 4}}}}),
                wrong + "(got 0 and 4).");
  auto a = http_->Post(Pools() + "/fixed:setAutoscaling",
                       {{"autoscaling", {{"enabled", true}, {"minNodeCount", 0}, {"maxNodeCount", 16}}}});
  EXPECT_EQ(a.status, 200) << a.raw;
}

TEST_F(GkePoolRulesTest, AutoscalingBoundsFollowTheProto) {
  json p = Single("bounds");
  p["autoscaling"] = {{"enabled", true}, {"minNodeCount", 3}, {"maxNodeCount", 2}};
  ExpectInvalid(Post(p), "Autoscaling: minNodeCount (3) must be greater than or equal to 0 and less "
                         "than or equal to maxNodeCount (2).");
  p["autoscaling"] = {{"enabled", true}, {"maxNodeCount", 2}, {"totalMaxNodeCount", 2}};
  ExpectInvalid(Post(p), "Autoscaling: the total_*_node_count fields are mutually exclusive with the "
                         "*_node_count fields.");
}

TEST_F(GkePoolRulesTest, FlexStartPoolsMeetTheDynamicWorkloadSchedulersRules) {
  auto ok = Post(FlexSlice("flex"));
  ASSERT_EQ(ok.status, 200) << ok.raw;
  WaitGke(ok.body);
  EXPECT_EQ(http_->Get(Pools() + "/flex").body["config"]["flexStart"], true);

  json spot = FlexSlice("spot");
  spot["config"]["spot"] = true;
  ExpectInvalid(Post(spot), "Flex-start node pools cannot use Spot or preemptible VMs.");
  json any = FlexSlice("any");
  any["config"].erase("reservationAffinity");
  ExpectInvalid(Post(any), "Flex-start node pools require reservation affinity NO_RESERVATION, got none.");
  any["config"]["reservationAffinity"] = {{"consumeReservationType", "ANY_RESERVATION"}};
  ExpectInvalid(Post(any),
                "Flex-start node pools require reservation affinity NO_RESERVATION, got ANY_RESERVATION.");
  json repair = FlexSlice("repair");
  repair.erase("management");  // GKE's default turns auto-repair on
  ExpectInvalid(Post(repair), "Flex-start node pools require node auto-repair to be disabled.");
  json fixed = V5pSlice("fixed", 16);
  fixed["config"] = FlexSlice("x")["config"];
  fixed["management"] = {{"autoRepair", false}, {"autoUpgrade", true}};
  ExpectInvalid(Post(fixed), "Flex-start node pools require autoscaling: their nodes are provisioned "
                             "by the Dynamic Workload Scheduler when the autoscaler asks for them.");
  ExpectInvalid(http_->Post(Pools() + "/flex:setManagement",
                            {{"management", {{"autoRepair", true}, {"autoUpgrade", true}}}}),
                "Flex-start node pools require node auto-repair to be disabled.");
}

TEST_F(GkePoolRulesTest, DisksAndZonesChangeInPlace) {
  CreatePool(Single("disk"));
  auto r = http_->Put(Pools() + "/disk", {{"diskSizeGb", "200"}, {"diskType", "pd-ssd"}});
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["operationType"], "UPGRADE_NODES");
  WaitGke(r.body);
  auto pool = http_->Get(Pools() + "/disk").body;
  EXPECT_EQ(pool["config"]["diskSizeGb"], 200);
  EXPECT_EQ(pool["config"]["diskType"], "pd-ssd");
  ExpectInvalid(http_->Put(Pools() + "/disk", {{"diskSizeGb", "5"}}),
                "The smallest allowed disk size is 10GB, got 5GB.");

  const std::string old_group = pool["instanceGroupUrls"][0];
  r = http_->Put(Pools() + "/disk", {{"locations", {"us-central1-b"}}});
  ASSERT_EQ(r.status, 200) << r.raw;
  WaitGke(r.body);
  pool = http_->Get(Pools() + "/disk").body;
  EXPECT_EQ(pool["locations"], json::array({"us-central1-b"}));
  const std::string group = pool["instanceGroupUrls"][0];
  EXPECT_NE(group.find("/zones/us-central1-b/"), std::string::npos) << group;
  EXPECT_EQ(http_->Get(group.substr(group.find("/compute/v1/"))).body["targetSize"], 1);
  EXPECT_EQ(http_->Get(old_group.substr(old_group.find("/compute/v1/"))).status, 404);
}

TEST_F(GkePoolRulesTest, ClustersAreCreatedWithTheirPools) {
  // Long enough that the pools are still PROVISIONING when read back, however
  // loaded the machine.
  CloudEmulatorOptions o = FastOptions();
  o.op_latency_ms["CREATE_CLUSTER"] = 1000;
  StartWith(o);
  const std::string base = "/v1/projects/p1/locations/us-central1-a/clusters";
  auto r = http_->Post(base, {{"cluster", {{"name", "legacy"}, {"initialNodeCount", 2},
                                           {"nodeConfig", {{"machineType", "e2-standard-4"}}}}}});
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["operationType"], "CREATE_CLUSTER");
  EXPECT_EQ(http_->Get(base + "/legacy/nodePools/default-pool").body["status"], "PROVISIONING");
  WaitGke(r.body);
  auto pool = http_->Get(base + "/legacy/nodePools/default-pool").body;
  EXPECT_EQ(pool["status"], "RUNNING");
  EXPECT_EQ(pool["initialNodeCount"], 2);
  EXPECT_EQ(pool["config"]["machineType"], "e2-standard-4");

  json pools = json::array({Single("cpu"), V5pSlice("slice", 16)});
  pools[0]["config"]["machineType"] = "e2-standard-8";
  r = http_->Post(base, {{"cluster", {{"name", "modern"}, {"nodePools", pools}}}});
  ASSERT_EQ(r.status, 200) << r.raw;
  WaitGke(r.body);
  auto listed = http_->Get(base + "/modern/nodePools").body["nodePools"];
  ASSERT_EQ(listed.size(), 2u);
  for (const auto& p : listed) EXPECT_EQ(p["status"], "RUNNING") << p.dump();

  ExpectInvalid(http_->Post(base, {{"cluster", {{"name", "both"}, {"initialNodeCount", 1},
                                                {"nodePools", pools}}}}),
                "Cluster.initial_node_count and Cluster.node_config must not be set when "
                "Cluster.node_pools is specified.");
  ExpectInvalid(http_->Post(base, {{"cluster", {{"name", "neither"}}}}),
                "Cluster.initial_node_count must be greater than zero.");
  pools[1]["initialNodeCount"] = 3;
  ExpectInvalid(http_->Post(base, {{"cluster", {{"name", "bad"}, {"nodePools", pools}}}}),
                "Invalid node count 3 for TPU topology \"4x4x4\" of machine type \"ct5p-hightpu-4t\": "
                "must be 16.");
  EXPECT_EQ(http_->Get(base + "/bad").status, 404) << "a refused create makes nothing";
}

}  // namespace
}  // namespace tpu::sim::testing
