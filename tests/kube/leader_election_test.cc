// Leader election over a Lease in the emulator, with fake clocks: one holder
// at a time, takeover only after the lease expires by the taker's clock, a
// released lease is free at once. (That only the holder writes is
// tests/kueue/leader_only_sync_test.cc.)
#include "kube/leader_election.h"

#include <gtest/gtest.h>

#include "kube_test_util.h"

namespace tpu::kube {
namespace {

using testing::Lease;

TEST(LeaderElectionTest, OneHolderAndTakeoverAfterExpiry) {
  testing::Cluster c;
  FakeEnv clock;
  LeaderElector a(*c.client, clock, Lease("replica-a"));
  LeaderElector b(*c.client, clock, Lease("replica-b"));
  EXPECT_TRUE(*a.TryAcquireOrRenew());
  EXPECT_FALSE(*b.TryAcquireOrRenew());
  EXPECT_TRUE(a.IsLeader());
  EXPECT_FALSE(b.IsLeader());

  clock.Advance(std::chrono::seconds(5));
  EXPECT_TRUE(*a.TryAcquireOrRenew());  // renews
  EXPECT_FALSE(*b.TryAcquireOrRenew());
  // a stops renewing (stuck or partitioned): it stops acting at its renew
  // deadline, and b takes over once the lease has expired by b's clock.
  clock.Advance(std::chrono::seconds(11));
  EXPECT_FALSE(a.IsLeader());
  EXPECT_FALSE(*b.TryAcquireOrRenew());  // b saw the renewal 11s ago, less than 15s
  clock.Advance(std::chrono::seconds(5));
  EXPECT_TRUE(*b.TryAcquireOrRenew());
  EXPECT_FALSE(*a.TryAcquireOrRenew());
  auto lease = c.client->Get(resources::kLeases, "default", "tpu-provisioner");
  EXPECT_EQ((*lease)["spec"]["holderIdentity"], "replica-b");
  EXPECT_EQ((*lease)["spec"]["leaseTransitions"], 1);
}

TEST(LeaderElectionTest, ReleasedLeaseIsFreeAtOnce) {
  testing::Cluster c;
  FakeEnv clock;
  LeaderElector a(*c.client, clock, Lease("replica-a"));
  LeaderElector b(*c.client, clock, Lease("replica-b"));
  ASSERT_TRUE(*a.TryAcquireOrRenew());
  ASSERT_FALSE(*b.TryAcquireOrRenew());
  ASSERT_TRUE(a.Release().ok());
  EXPECT_FALSE(a.IsLeader());
  EXPECT_TRUE(*b.TryAcquireOrRenew());
}

}  // namespace
}  // namespace tpu::kube
