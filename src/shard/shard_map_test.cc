// The shard map is a pure function every replica must agree on.
#include "shard/shard_map.h"

#include <map>

#include <gtest/gtest.h>

namespace tpu::shard {
namespace {

TEST(ShardMapTest, StableKnownValues) {
  // Fixed here so a change of hash (which would move every target at the next
  // rollout, while old and new replicas run side by side) fails a test.
  EXPECT_EQ(ShardOf("proj/c1", 16), ShardOf("proj/c1", 16));
  EXPECT_EQ(ShardOf("", 7), static_cast<int>(14695981039346656037ull % 7));
  EXPECT_EQ(ShardOf("a", 1000), static_cast<int>(0xaf63dc4c8601ec8cull % 1000));
}

TEST(ShardMapTest, SpreadsTargetsOverShards) {
  std::map<int, int> per_shard;
  for (int i = 0; i < 3000; ++i) per_shard[ShardOf("proj-" + std::to_string(i % 50) + "/c" + std::to_string(i), 12)]++;
  ASSERT_EQ(per_shard.size(), 12u);
  for (const auto& [shard, n] : per_shard) {
    EXPECT_GE(shard, 0);
    EXPECT_LT(shard, 12);
    EXPECT_GT(n, 3000 / 12 / 2) << "shard " << shard;
    EXPECT_LT(n, 3000 / 12 * 2) << "shard " << shard;
  }
}

TEST(ShardMapTest, FairShareRoundsUp) {
  EXPECT_EQ(FairShare(12, 3), 4);
  EXPECT_EQ(FairShare(12, 5), 3);
  EXPECT_EQ(FairShare(12, 0), 12);  // no replica seen yet: this one may take all
  EXPECT_EQ(FairShare(2, 3), 1);
}

TEST(ShardMapTest, LeaseNames) {
  EXPECT_EQ(ShardLeaseName("tpu-provisioner", 3), "tpu-provisioner-shard-3");
  EXPECT_EQ(MemberLeaseName("tpu-provisioner", "pod-a"), "tpu-provisioner-member-pod-a");
}

}  // namespace
}  // namespace tpu::shard
