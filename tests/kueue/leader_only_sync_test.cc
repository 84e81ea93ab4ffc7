// Kueue writes go through the leader-only client: a replica that does not hold
// the lease writes nothing, and the holder writes the ClusterQueue.
#include <gtest/gtest.h>

#include "kube/leader_election.h"
#include "kube/leader_only_client.h"
#include "kueue/kueue_test_util.h"
#include "kueue/quota_sync.h"

namespace tpu::kueue {
namespace {

using kube::LeaderElector;
using kube::LeaderOnlyClient;
namespace testing = kube::testing;
namespace resources = kube::resources;

using testing::Lease;

TEST(LeaderOnlySyncTest, OnlyTheHolderWrites) {
  testing::Cluster c;
  FakeEnv clock;
  LeaderElector a(*c.client, clock, Lease("replica-a"));
  LeaderElector b(*c.client, clock, Lease("replica-b"));
  LeaderOnlyClient a_client(*c.client, a), b_client(*c.client, b);
  ASSERT_TRUE(*a.TryAcquireOrRenew());
  ASSERT_FALSE(*b.TryAcquireOrRenew());

  KueueConfig cfg;
  cfg.cluster_queue = "tpu-queue";
  auto target = testing::Target({testing::Pool("train", "v5e", "2x4", 1)});
  QuotaSync follower(b_client, cfg);
  auto refused = follower.Sync(target);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("not the leader (lease default/tpu-provisioner)"), std::string::npos);
  EXPECT_FALSE(c.client->Get(resources::kClusterQueues, "", "tpu-queue").ok());  // nothing written

  QuotaSync leader(a_client, cfg);
  ASSERT_TRUE(leader.Sync(target).ok());
  EXPECT_TRUE(c.client->Get(resources::kClusterQueues, "", "tpu-queue").ok());
}

}  // namespace
}  // namespace tpu::kueue
