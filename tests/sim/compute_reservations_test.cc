// Compute reservations in the cloud emulator, over HTTP: declared through the
// capacity config, served by zones/Z/reservations[/N] and
// aggregated/reservations in their owner project, with inUseCount kept by
// GKE node pools and MIG instances that consume them (and give them back),
// a shared reservation consumed from another project, and the errors of an
// exhausted one (GKE's for a pool, GCE's for a MIG's instance).
#include "sim_test_util.h"

namespace tpu::sim::testing {
namespace {

const std::string kP1 = "/compute/v1/projects/p1";
const std::string kZoneA = kP1 + "/zones/us-central1-a";

class ReservationsTest : public EmulatorTest {
 protected:
  void SetUp() override {
    EmulatorTest::SetUp();
    emu_->SetCapacity(json::parse(R"({"reservations": [
      {"name": "r1", "project": "p1", "zone": "us-central1-a", "machineType": "ct6e-standard-4t",
       "count": 4, "specificReservationRequired": true, "deploymentType": "DENSE", "blockCount": 1},
      {"name": "r2", "project": "p1", "zone": "us-central1-b", "machineType": "ct6e-standard-4t",
       "count": 2, "shared": ["p2"]},
      {"name": "chips-only", "zone": "us-central1-a", "accelerator": "tpu-v6e-slice", "chips": 16}]})"));
  }
  json Reservation(const std::string& zone, const std::string& name, const std::string& project = "p1") {
    auto r = http_->Get("/compute/v1/projects/" + project + "/zones/" + zone + "/reservations/" + name);
    EXPECT_EQ(r.status, 200) << r.raw;
    return r.body;
  }
  std::string InUse(const std::string& zone, const std::string& name) {
    return Reservation(zone, name)["specificReservation"].value("inUseCount", "?");
  }
  static std::string OpPath(const json& op) {
    const std::string self = op["selfLink"].get<std::string>();
    return self.substr(self.find("/compute/v1/"));
  }
  json WaitCompute(const json& op) {
    auto r = http_->Post(OpPath(op) + "/wait");
    EXPECT_EQ(r.body["status"], "DONE") << r.raw;
    return r.body;
  }
  static json Affinity(const std::string& value) {
    return {{"consumeReservationType", "SPECIFIC_RESERVATION"},
            {"key", "compute.googleapis.com/reservation-name"},
            {"values", {value}}};
  }
};

TEST_F(ReservationsTest, ServedInTheirOwnerProjectWithCountAndInUseCount) {
  json r1 = Reservation("us-central1-a", "r1");
  EXPECT_EQ(r1["kind"], "compute#reservation");
  EXPECT_EQ(r1["name"], "r1");
  EXPECT_EQ(r1["status"], "READY");
  EXPECT_EQ(r1["zone"], "https://www.googleapis.com/compute/v1/projects/p1/zones/us-central1-a");
  EXPECT_EQ(r1["selfLink"],
            "https://www.googleapis.com/compute/v1/projects/p1/zones/us-central1-a/reservations/r1");
  EXPECT_TRUE(r1["id"].is_string());
  EXPECT_EQ(r1["specificReservationRequired"], true);
  EXPECT_EQ(r1["specificReservation"]["count"], "4");  // int64: a decimal string
  EXPECT_EQ(r1["specificReservation"]["inUseCount"], "0");
  EXPECT_EQ(r1["specificReservation"]["instanceProperties"]["machineType"], "ct6e-standard-4t");
  EXPECT_EQ(r1["shareSettings"], json({{"shareType", "LOCAL"}}));
  EXPECT_EQ(r1["deploymentType"], "DENSE");
  EXPECT_EQ(r1["resourceStatus"]["reservationBlockCount"], 1);
  json r2 = Reservation("us-central1-b", "r2");
  EXPECT_EQ(r2["shareSettings"]["shareType"], "SPECIFIC_PROJECTS");
  EXPECT_EQ(r2["shareSettings"]["projectMap"]["p2"]["projectId"], "p2");
  EXPECT_EQ(r2["specificReservationRequired"], false);  // the API's default
  EXPECT_FALSE(r2.contains("deploymentType"));

  // Zonal list, aggregated list (paged), and where a reservation is not.
  auto zonal = http_->Get(kZoneA + "/reservations").body;
  EXPECT_EQ(zonal["kind"], "compute#reservationList");
  ASSERT_EQ(zonal["items"].size(), 1u) << zonal.dump();  // chips-only is not a Compute resource
  auto agg = http_->Get(kP1 + "/aggregated/reservations").body;
  EXPECT_EQ(agg["kind"], "compute#reservationAggregatedList");
  EXPECT_EQ(agg["items"]["zones/us-central1-a"]["reservations"][0]["name"], "r1");
  EXPECT_EQ(agg["items"]["zones/us-central1-b"]["reservations"][0]["name"], "r2");
  auto page1 = http_->Get(kP1 + "/aggregated/reservations?maxResults=1").body;
  ASSERT_TRUE(page1.contains("nextPageToken")) << page1.dump();
  auto page2 = http_->Get(kP1 + "/aggregated/reservations?maxResults=1&pageToken=" +
                          page1["nextPageToken"].get<std::string>()).body;
  EXPECT_EQ(page2["items"]["zones/us-central1-b"]["reservations"][0]["name"], "r2");
  EXPECT_FALSE(page2.contains("nextPageToken"));
  EXPECT_EQ(http_->Get(kP1 + "/zones/us-central1-b/reservations/r1").status, 404);
  EXPECT_EQ(http_->Get("/compute/v1/projects/p2/zones/us-central1-b/reservations/r2").status, 404)
      << "a shared reservation lives in its owner project only";
  EXPECT_TRUE(http_->Get("/compute/v1/projects/p2/aggregated/reservations").body["items"].empty());
  // The capacity config reads back in VMs as well as chips.
  auto cap = http_->Get("/sim/capacity").body;
  for (const auto& r : cap["reservations"])
    if (r["name"] == "r1") {
      EXPECT_EQ(r["count"], 4) << r.dump();
    }
}

TEST_F(ReservationsTest, NodePoolTakesVmsAndGivesThemBack) {
  json pool = V6ePool("train", "2x4", 2);  // 2 VMs of ct6e-standard-4t
  pool["config"]["reservationAffinity"] = Affinity("r1");
  EXPECT_FALSE(CreatePool(pool).contains("error"));
  EXPECT_EQ(InUse("us-central1-a", "r1"), "2");
  // A second slice of 2 fits (4 VMs); a third does not, in GKE's words.
  pool["name"] = "train2";
  EXPECT_FALSE(CreatePool(pool).contains("error"));
  EXPECT_EQ(InUse("us-central1-a", "r1"), "4");
  pool["name"] = "train3";
  json op = CreatePool(pool);
  ASSERT_TRUE(op.contains("error")) << op.dump();
  EXPECT_EQ(op["error"]["code"], 8);
  EXPECT_EQ(op["error"]["message"],
            "Failed to create node pool \"train3\": Reservation does not have enough resources for the "
            "request: specific reservation \"r1\" is insufficient for node pool \"train3\" at zone "
            "\"us-central1-a\": required 2 and short of 2 VM count of machine type ct6e-standard-4t.");
  EXPECT_EQ(InUse("us-central1-a", "r1"), "4") << "a failed pool holds nothing";
  WaitGke(http_->Delete(Pools() + "/train").body);
  EXPECT_EQ(InUse("us-central1-a", "r1"), "2");
  WaitGke(http_->Delete(Pools() + "/train2").body);
  EXPECT_EQ(InUse("us-central1-a", "r1"), "0");
}

TEST_F(ReservationsTest, MigInstancesTakeVmsAndGiveThemBack) {
  json t = {{"name", "tmpl"},
            {"properties", {{"machineType", "ct6e-standard-4t"},
                            {"scheduling", {{"provisioningModel", "RESERVATION_BOUND"},
                                            {"instanceTerminationAction", "DELETE"},
                                            {"onHostMaintenance", "TERMINATE"}}},
                            {"reservationAffinity", Affinity("r1")}}}};
  WaitCompute(http_->Post(kP1 + "/global/instanceTemplates", t).body);
  json mig = {{"name", "mig"}, {"instanceTemplate", "global/instanceTemplates/tmpl"}, {"targetSize", 3}};
  WaitCompute(http_->Post(kZoneA + "/instanceGroupManagers", mig).body);
  EXPECT_EQ(InUse("us-central1-a", "r1"), "3");

  // Past the reservation: the fifth instance's attempt fails in GCE's words
  // and it stays CREATING with no status; the group is not stable.
  WaitCompute(http_->Post(kZoneA + "/instanceGroupManagers/mig/resize?size=5").body);
  EXPECT_EQ(InUse("us-central1-a", "r1"), "4");
  auto members = http_->Post(kZoneA + "/instanceGroupManagers/mig/listManagedInstances").body["managedInstances"];
  ASSERT_EQ(members.size(), 5u);
  int failed = 0;
  for (const auto& m : members) {
    if (!m.contains("lastAttempt")) continue;
    ++failed;
    EXPECT_EQ(m["currentAction"], "CREATING");
    EXPECT_FALSE(m.contains("instanceStatus"));
    const json& e = m["lastAttempt"]["errors"]["errors"][0];
    EXPECT_EQ(e["code"], "CONDITION_NOT_MET");
    EXPECT_EQ(e["message"], "Specified reservation 'r1' does not have available resources for the request.");
  }
  EXPECT_EQ(failed, 1);
  EXPECT_EQ(http_->Get(kZoneA + "/instanceGroupManagers/mig").body["status"]["isStable"], false);

  WaitCompute(http_->Post(kZoneA + "/instanceGroupManagers/mig/resize?size=1").body);
  EXPECT_EQ(InUse("us-central1-a", "r1"), "1");
  WaitCompute(http_->Delete(kZoneA + "/instanceGroupManagers/mig").body);
  EXPECT_EQ(InUse("us-central1-a", "r1"), "0");
}

TEST_F(ReservationsTest, SharedReservationIsConsumedByAnotherProjectsPool) {
  ASSERT_TRUE(emu_->EnsureCluster("p2", "us-central1-b", "c2").ok());
  const std::string pools = "/v1/projects/p2/locations/us-central1-b/clusters/c2/nodePools";
  json pool = V6ePool("shared", "2x4", 2);
  pool["config"]["reservationAffinity"] = Affinity("projects/p1/reservations/r2");
  auto r = http_->Post(pools, {{"nodePool", pool}});
  ASSERT_EQ(r.status, 200) << r.raw;
  auto wait = [&](const json& op) {
    json last;
    const std::string path = "/v1/projects/p2/locations/us-central1-b/operations/" + op["name"].get<std::string>();
    EXPECT_TRUE(PollUntil([&] {
      last = http_->Get(path).body;
      return last.value("status", "") == "DONE";
    }));
    return last;
  };
  EXPECT_FALSE(wait(r.body).contains("error"));
  EXPECT_EQ(InUse("us-central1-b", "r2"), "2") << "seen from the owner project";
  pool["name"] = "shared2";
  json op = wait(http_->Post(pools, {{"nodePool", pool}}).body);
  ASSERT_TRUE(op.contains("error"));
  EXPECT_NE(op["error"]["message"].get<std::string>().find(
                "specific reservation \"r2\" is insufficient for node pool \"shared2\" at zone \"us-central1-b\": "
                "required 2 and short of 2 VM count"),
            std::string::npos)
      << op.dump();
  wait(http_->Delete(pools + "/shared").body);
  EXPECT_EQ(InUse("us-central1-b", "r2"), "0");
}

}  // namespace
}  // namespace tpu::sim::testing
