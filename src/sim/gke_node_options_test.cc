// GKE's rules on a node pool's node options (gke_node_options.h) and shared
// reservations in the capacity model (cloud_capacity.h).
#include "sim/gke_node_options.h"

#include <gtest/gtest.h>

#include "sim/cloud_capacity.h"

namespace tpu::sim {
namespace {

json Pool() {
  return json::parse(R"({"name": "p", "maxPodsConstraint": {"maxPodsPerNode": "15"},
    "networkConfig": {"additionalNodeNetworkConfigs": [{"network": "v", "subnetwork": "s"}]},
    "config": {"bootDiskKmsKey": "projects/k/locations/us/keyRings/r/cryptoKeys/boot",
               "secondaryBootDisks": [{"diskImage": "projects/p/global/images/i", "mode": "CONTAINER_IMAGE_CACHE"}],
               "shieldedInstanceConfig": {"enableSecureBoot": true}}})");
}

TEST(GkeNodeOptionsTest, AcceptsWhatGkeAccepts) {
  EXPECT_FALSE(CheckNodeOptions(Pool()));
  json numeric = Pool();
  numeric["maxPodsConstraint"]["maxPodsPerNode"] = 256;
  EXPECT_FALSE(CheckNodeOptions(numeric));
  EXPECT_FALSE(CheckNodeOptions(json::parse(R"({"name": "bare", "config": {}})")));
}

TEST(GkeNodeOptionsTest, RefusesWhatGkeRefuses) {
  struct Case {
    const char* pointer;
    json value;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"/maxPodsConstraint/maxPodsPerNode", "7", "max_pods_per_node must be between 8 and 256"},
      {"/maxPodsConstraint/maxPodsPerNode", 257, "max_pods_per_node must be between 8 and 256"},
      {"/maxPodsConstraint/maxPodsPerNode", "x", "max_pods_per_node must be between 8 and 256"},
      {"/config/bootDiskKmsKey", "my-key", "Invalid boot_disk_kms_key"},
      {"/config/secondaryBootDisks/0/diskImage", "my-image", "Invalid secondary_boot_disks.disk_image"},
      {"/networkConfig/additionalNodeNetworkConfigs/0/subnetwork", "", "network and subnetwork are both required"},
  };
  for (const auto& c : cases) {
    json np = Pool();
    np[json::json_pointer(c.pointer)] = c.value;
    auto e = CheckNodeOptions(np);
    ASSERT_TRUE(e) << c.pointer;
    EXPECT_EQ(e->http, 400);
    EXPECT_NE(e->message.find(c.message), std::string::npos) << e->message;
  }
}

TEST(CapacityModelTest, SharedReservationsBelongToTheirProject) {
  CapacityModel m;
  m.Apply(json::parse(R"({"reservations": [
      {"name": "r", "project": "owner", "zone": "z-a", "accelerator": "tpu-v6e-slice", "chips": 8},
      {"name": "r", "project": "consumer", "zone": "z-a", "accelerator": "tpu-v6e-slice", "chips": 0},
      {"name": "legacy", "zone": "z-a", "accelerator": "tpu-v6e-slice", "chips": 4}]})"));
  EXPECT_EQ(m.Acquire("z-a", "tpu-v6e-slice", "owner/r", 8), "");
  EXPECT_NE(m.Acquire("z-a", "tpu-v6e-slice", "consumer/r", 8), "") << "the consumer's own r is empty";
  EXPECT_NE(m.Acquire("z-a", "tpu-v6e-slice", "owner/r", 1), "") << "the owner's r is used up";
  EXPECT_EQ(m.Acquire("z-a", "tpu-v6e-slice", "anyone/legacy", 4), "") << "declared without a project";
  json j = m.ToJson();
  EXPECT_EQ(j["reservations"][2].value("project", ""), "owner");
  EXPECT_EQ(j["reservations"][2].value("used", 0), 8);
  m.Release("z-a", "tpu-v6e-slice", "owner/r", 8);
  EXPECT_EQ(m.Acquire("z-a", "tpu-v6e-slice", "owner/r", 8), "");
}

// Spot VMs run on spare capacity: a zone may be out of on-demand chips and
// still have spot ones (docs/emulator.md, "Capacity").
TEST(CapacityModelTest, SpotAndOnDemandChipsMayBeKeptApart) {
  CapacityModel m;
  m.Apply(json::parse(R"({"zones": [
      {"zone": "z-a", "accelerator": "tpu-v5-lite-podslice", "provisioningModel": "STANDARD", "chips": 0},
      {"zone": "z-a", "accelerator": "tpu-v5-lite-podslice", "provisioningModel": "SPOT", "chips": 8},
      {"zone": "z-b", "accelerator": "tpu-v5-lite-podslice", "chips": 4}]})"));
  EXPECT_NE(m.Acquire("z-a", "tpu-v5-lite-podslice", "", 4, "STANDARD"), "");
  EXPECT_EQ(m.Acquire("z-a", "tpu-v5-lite-podslice", "", 8, "SPOT"), "");
  EXPECT_NE(m.Acquire("z-a", "tpu-v5-lite-podslice", "", 1, "SPOT"), "") << "the spot chips are used up";
  m.Release("z-a", "tpu-v5-lite-podslice", "", 4, "SPOT");
  EXPECT_EQ(m.Acquire("z-a", "tpu-v5-lite-podslice", "", 4, "SPOT"), "");
  // A zone without a split: both models draw on the one pool.
  EXPECT_EQ(m.Acquire("z-b", "tpu-v5-lite-podslice", "", 2, "SPOT"), "");
  EXPECT_NE(m.Acquire("z-b", "tpu-v5-lite-podslice", "", 4, "STANDARD"), "");
  json j = m.ToJson();
  bool split = false;
  for (const auto& z : j["zones"])
    if (z.value("provisioningModel", "") == "SPOT") split = z["used"] == 8 && z["chips"] == 8;
  EXPECT_TRUE(split) << j.dump();
}

}  // namespace
}  // namespace tpu::sim
