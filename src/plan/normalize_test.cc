// Normal forms the diff relies on.
#include "plan/normalize.h"

#include <gtest/gtest.h>

#include "plan/ownership.h"

namespace tpu::plan {
namespace {

TEST(NormalizeTest, TaintEffects) {
  EXPECT_EQ(GkeTaintEffect("NoSchedule"), "NO_SCHEDULE");
  EXPECT_EQ(GkeTaintEffect("PreferNoSchedule"), "PREFER_NO_SCHEDULE");
  EXPECT_EQ(GkeTaintEffect("NoExecute"), "NO_EXECUTE");
  EXPECT_EQ(GkeTaintEffect("NO_EXECUTE"), "NO_EXECUTE");
}

TEST(NormalizeTest, TaintsSortedWithoutSystemOnes) {
  std::vector<cloud::NodeTaint> in = {{"b", "1", "NoSchedule"},
                                      {"google.com/tpu", "present", "NO_SCHEDULE"},
                                      {"a", "2", "NO_EXECUTE"},
                                      {"b", "1", "NO_SCHEDULE"}};
  std::vector<cloud::NodeTaint> want = {{"a", "2", "NO_EXECUTE"}, {"b", "1", "NO_SCHEDULE"}};
  EXPECT_EQ(NormalTaints(in), want);
}

TEST(NormalizeTest, Scopes) {
  EXPECT_EQ(ShortScope("https://www.googleapis.com/auth/cloud-platform"), "cloud-platform");
  EXPECT_EQ(NormalScopes({"https://www.googleapis.com/auth/b", "a", "b"}), (std::vector<std::string>{"a", "b"}));
}

TEST(NormalizeTest, Paths) {
  EXPECT_EQ(ResourcePath("https://www.googleapis.com/compute/v1/projects/p/global/instanceTemplates/t"),
            "projects/p/global/instanceTemplates/t");
  EXPECT_EQ(ResourcePath("t"), "t");
  EXPECT_EQ(LastSegment("projects/p/regions/r/resourcePolicies/wp"), "wp");
  EXPECT_EQ(RegionOfZone("us-central2-b"), "us-central2");
  EXPECT_EQ(RegionOfZone("us-central2"), "us-central2");
  EXPECT_EQ(ReservationName("projects/p/reservations/r", "p"), "r");
  EXPECT_EQ(ReservationName("projects/q/reservations/r", "p"), "projects/q/reservations/r");
}

TEST(NormalizeTest, Versions) {
  EXPECT_TRUE(VersionMatches("1.30", "1.30.5-gke.1014001"));
  EXPECT_TRUE(VersionMatches("1.30.5", "1.30.5-gke.1014001"));
  EXPECT_TRUE(VersionMatches("1.30.5-gke.1014001", "1.30.5-gke.1014001"));
  EXPECT_TRUE(VersionMatches("latest", "1.31.0-gke.1"));
  EXPECT_FALSE(VersionMatches("1.3", "1.30.5-gke.1"));
  EXPECT_FALSE(VersionMatches("1.31", "1.30.5-gke.1"));
}

TEST(NormalizeTest, PoolChips) {
  EXPECT_EQ(PoolChips("ct5p-hightpu-4t", 4), 16);
  EXPECT_EQ(PoolChips("e2-standard-4", 3), 0);
}

TEST(OwnershipTest, PoolOwnership) {
  cloud::NodePool p;
  EXPECT_EQ(PoolOwnership(p, "p/c"), Ownership::kUnmanaged);
  p.resource_labels = cloud::StringMap{{cloud::kManagedLabel, "true"}, {cloud::kTargetHashLabel, TargetHash("p/c")}};
  EXPECT_EQ(PoolOwnership(p, "p/c"), Ownership::kOwned);
  EXPECT_EQ(PoolOwnership(p, "p/d"), Ownership::kForeign);
  EXPECT_EQ(TargetHash("p/c").size(), 16u);
  EXPECT_NE(TargetHash("p/c"), TargetHash("p/d"));
}

}  // namespace
}  // namespace tpu::plan
