// The instance groups behind GKE node pools, through the Compute API: one per
// node zone, named by the pool's instanceGroupUrls, sized to the pool's current
// node count (setSize moves targetSize; initialNodeCount stays), listed in the
// aggregated list, and removed with their pool or cluster.
#include "sim_test_util.h"

namespace tpu::sim::testing {
namespace {

using GkeInstanceGroupsTest = EmulatorTest;

// The Compute path of an instanceGroupUrls entry.
std::string ComputePath(const json& url) {
  std::string u = url.get<std::string>();
  return "/compute/v1/" + u.substr(u.find("projects/"));
}

TEST_F(GkeInstanceGroupsTest, TargetSizeFollowsSetSizeWhileInitialNodeCountStays) {
  CreatePool({{"name", "single"}, {"initialNodeCount", 2}, {"config", {{"machineType", "ct6e-standard-4t"}}}});
  json pool = http_->Get(Pools() + "/single").body;
  ASSERT_EQ(pool["instanceGroupUrls"].size(), 1u) << pool.dump();
  const std::string path = ComputePath(pool["instanceGroupUrls"][0]);
  auto mig = http_->Get(path);
  ASSERT_EQ(mig.status, 200) << path << " " << mig.raw;
  EXPECT_EQ(mig.body["kind"], "compute#instanceGroupManager");
  EXPECT_EQ(mig.body["targetSize"], 2);
  EXPECT_EQ(mig.body["status"]["isStable"], true) << "the create operation ended";
  EXPECT_EQ(mig.body["zone"], "https://www.googleapis.com/compute/v1/projects/p1/zones/us-central1-a");
  EXPECT_EQ(mig.body["selfLink"], pool["instanceGroupUrls"][0]);

  auto r = http_->Post(Pools() + "/single:setSize", {{"nodeCount", 5}});
  ASSERT_EQ(r.status, 200) << r.raw;
  mig = http_->Get(path);
  EXPECT_EQ(mig.body["targetSize"], 5) << "targetSize moves when the resize starts";
  EXPECT_EQ(mig.body["status"]["isStable"], false);
  EXPECT_EQ(mig.body["currentActions"]["creating"], 3);
  WaitGke(r.body);
  mig = http_->Get(path);
  EXPECT_EQ(mig.body["targetSize"], 5);
  EXPECT_EQ(mig.body["status"]["isStable"], true);
  EXPECT_EQ(http_->Get(Pools() + "/single").body["initialNodeCount"], 2);

  // The aggregated list (one call for all zones) holds it, keyed by its zone.
  auto agg = http_->Get("/compute/v1/projects/p1/aggregated/instanceGroupManagers");
  ASSERT_EQ(agg.status, 200);
  const json& items = agg.body["items"]["zones/us-central1-a"]["instanceGroupManagers"];
  ASSERT_EQ(items.size(), 1u) << agg.raw;
  EXPECT_EQ(items[0]["targetSize"], 5);

  // A refused resize (stockout) leaves the size where it was.
  emu_->SetZoneCapacity("us-central1-a", "tpu-v6e-slice", 20);
  r = http_->Post(Pools() + "/single:setSize", {{"nodeCount", 50}});
  ASSERT_EQ(r.status, 200) << r.raw;
  WaitGke(r.body);
  EXPECT_EQ(http_->Get(path).body["targetSize"], 5);
}

TEST_F(GkeInstanceGroupsTest, GroupsGoWithTheirPool) {
  CreatePool(V6ePool("slice", "4x4", 4));
  const std::string path = ComputePath(http_->Get(Pools() + "/slice").body["instanceGroupUrls"][0]);
  EXPECT_EQ(http_->Get(path).body["targetSize"], 4);
  auto del = http_->Delete(Pools() + "/slice");
  ASSERT_EQ(del.status, 200);
  EXPECT_EQ(http_->Get(path).status, 200) << "until the delete operation ends";
  WaitGke(del.body);
  EXPECT_EQ(http_->Get(path).status, 404);
}

TEST_F(GkeInstanceGroupsTest, RegionalPoolHasOneGroupPerZoneEachAtThePerZoneCount) {
  ASSERT_TRUE(emu_->EnsureCluster("p1", "us-east5", "r1").ok());
  auto r = http_->Post("/v1/projects/p1/locations/us-east5/clusters/r1/nodePools",
                       {{"nodePool", {{"name", "cpu"}, {"initialNodeCount", 1}}}});
  ASSERT_EQ(r.status, 200) << r.raw;
  WaitGke(r.body);
  json pool = http_->Get("/v1/projects/p1/locations/us-east5/clusters/r1/nodePools/cpu").body;
  ASSERT_EQ(pool["instanceGroupUrls"].size(), 3u);
  for (const auto& url : pool["instanceGroupUrls"]) EXPECT_EQ(http_->Get(ComputePath(url)).body["targetSize"], 1);
  auto agg = http_->Get("/compute/v1/projects/p1/aggregated/instanceGroupManagers");
  EXPECT_EQ(agg.body["items"].size(), 3u) << agg.raw;
  // Deleting the cluster removes its pools' groups too.
  auto del = http_->Delete("/v1/projects/p1/locations/us-east5/clusters/r1");
  ASSERT_EQ(del.status, 200);
  WaitGke(del.body);
  for (const auto& url : pool["instanceGroupUrls"]) EXPECT_EQ(http_->Get(ComputePath(url)).status, 404);
}

}  // namespace
}  // namespace tpu::sim::testing
