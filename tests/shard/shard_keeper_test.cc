// ShardKeeper against the Kubernetes API emulator, on a fake clock: one replica
// takes every shard, a second one gets half as the first gives them back, a
// dead replica's shards are taken over only after its Leases expire, a replica
// whose renewals fail stops holding before anyone may take over, and a
// shutdown hands shards over at once.
#include "shard/shard_keeper.h"

#include <atomic>
#include <set>

#include <gtest/gtest.h>

#include "base/fake_env.h"
#include "kube/resource.h"
#include "kube/rest_client.h"
#include "shard/shard_map.h"
#include "sim/kube/api_server.h"

namespace tpu::shard {
namespace {

using namespace std::chrono_literals;
constexpr int kShards = 6;

class ShardKeeperTest : public ::testing::Test {
 protected:
  ShardKeeperTest() : api_(Options()) {}

  kubesim::KubeApiServer::Options Options() {
    kubesim::KubeApiServer::Options o;
    o.fail = [this](const std::string&, const std::string&, const std::string&) { return failing_.load() ? 500 : 0; };
    return o;
  }

  void SetUp() override {
    ASSERT_TRUE(api_.Start().ok());
    kube::RestConfig rc;
    rc.server = api_.url();
    client_ = std::make_unique<kube::RestClient>(rc);
  }

  std::unique_ptr<ShardKeeper> Replica(const std::string& identity) {
    ShardConfig c;
    c.identity = identity;
    c.shards = kShards;
    c.join_rounds = 0;  // takes shards at its first round (the join round has a test of its own)
    return std::make_unique<ShardKeeper>(*client_, env_, c);
  }

  static std::set<int> Held(const ShardKeeper& k) {
    auto held = k.Snapshot().held;
    return {held.begin(), held.end()};
  }

  // The holder of every shard Lease, as the server has it.
  std::map<int, std::string> Holders() {
    std::map<int, std::string> out;
    for (int i = 0; i < kShards; ++i) {
      auto lease = client_->Get(kube::resources::kLeases, "default", ShardLeaseName("tpu-provisioner", i));
      if (lease.ok()) out[i] = (*lease)["spec"].value("holderIdentity", "");
    }
    return out;
  }

  std::atomic<bool> failing_{false};
  kubesim::KubeApiServer api_;
  std::unique_ptr<kube::RestClient> client_;
  FakeEnv env_;
};

TEST_F(ShardKeeperTest, ALoneReplicaTakesEveryShard) {
  auto a = Replica("a");
  ASSERT_TRUE(a->Tick().ok());
  EXPECT_EQ(Held(*a).size(), static_cast<size_t>(kShards));
  for (int i = 0; i < kShards; ++i) EXPECT_TRUE(a->Holds(i));
  for (const auto& [shard, holder] : Holders()) EXPECT_EQ(holder, "a") << shard;
  EXPECT_EQ(a->Snapshot().live_replicas, 1);
  EXPECT_EQ(a->Snapshot().acquired, static_cast<uint64_t>(kShards));
  EXPECT_EQ(a->Snapshot().takeovers, 0u);
}

TEST_F(ShardKeeperTest, ASecondReplicaGetsHalfAsTheFirstGivesThemBack) {
  auto a = Replica("a");
  auto b = Replica("b");
  ASSERT_TRUE(a->Tick().ok());
  ASSERT_TRUE(b->Tick().ok());  // sees two replicas, but every shard is held
  EXPECT_TRUE(Held(*b).empty());
  env_.Advance(2s);
  ASSERT_TRUE(a->Tick().ok());  // gives back its surplus
  EXPECT_EQ(Held(*a).size(), static_cast<size_t>(kShards / 2));
  EXPECT_EQ(a->Snapshot().released, static_cast<uint64_t>(kShards / 2));
  ASSERT_TRUE(b->Tick().ok());  // takes what was given back, at once
  EXPECT_EQ(Held(*b).size(), static_cast<size_t>(kShards / 2));
  EXPECT_EQ(b->Snapshot().takeovers, 0u);  // given back, not taken over

  std::set<int> all = Held(*a);
  for (int s : Held(*b)) EXPECT_TRUE(all.insert(s).second) << "shard " << s << " held twice";
  EXPECT_EQ(all.size(), static_cast<size_t>(kShards));
  for (int s : Held(*b)) EXPECT_EQ(Holders()[s], "b");
}

TEST_F(ShardKeeperTest, ADeadReplicasShardsAreTakenOverOnlyAfterTheirLeasesExpire) {
  auto a = Replica("a");
  auto b = Replica("b");
  ASSERT_TRUE(a->Tick().ok());
  ASSERT_TRUE(b->Tick().ok());
  env_.Advance(2s);
  ASSERT_TRUE(a->Tick().ok());
  ASSERT_TRUE(b->Tick().ok());
  const std::set<int> of_a = Held(*a);
  ASSERT_EQ(of_a.size(), static_cast<size_t>(kShards / 2));

  // `a` dies: it stops renewing. Within the lease duration nothing moves.
  for (int i = 0; i < 6; ++i) {
    env_.Advance(2s);
    ASSERT_TRUE(b->Tick().ok());
    EXPECT_EQ(Held(*b).size(), static_cast<size_t>(kShards / 2)) << "at " << (i + 1) * 2 << " s";
  }
  // `a` itself stopped acting at its renew deadline, before anyone could take over.
  EXPECT_TRUE(Held(*a).empty());
  for (int s : of_a) EXPECT_FALSE(a->Holds(s));

  env_.Advance(4s);  // 16 s since a's last renew: its Leases have expired
  ASSERT_TRUE(b->Tick().ok());
  EXPECT_EQ(Held(*b).size(), static_cast<size_t>(kShards));
  EXPECT_EQ(b->Snapshot().takeovers, static_cast<uint64_t>(kShards / 2));
  EXPECT_EQ(b->Snapshot().live_replicas, 1);
  for (const auto& [shard, holder] : Holders()) EXPECT_EQ(holder, "b") << shard;
}

TEST_F(ShardKeeperTest, FailingRenewalsStopTheHolderBeforeTheLeaseCanExpire) {
  auto a = Replica("a");
  ASSERT_TRUE(a->Tick().ok());
  failing_ = true;  // the API server answers 500 to everything
  env_.Advance(2s);
  EXPECT_FALSE(a->Tick().ok());
  EXPECT_EQ(a->Snapshot().errors, 1u);
  EXPECT_TRUE(a->Holds(0));  // renewed 2 s ago: still within the renew deadline
  env_.Advance(8s);          // 10 s since the last renew: the renew deadline
  EXPECT_FALSE(a->Tick().ok());
  for (int i = 0; i < kShards; ++i) EXPECT_FALSE(a->Holds(i)) << i;
  EXPECT_FALSE(a->OwnsTarget("proj/c1"));

  // The server recovers after the Leases expired; another replica takes them.
  failing_ = false;
  auto b = Replica("b");
  ASSERT_TRUE(b->Tick().ok());  // first sight of a's records
  env_.Advance(16s);
  ASSERT_TRUE(b->Tick().ok());
  EXPECT_EQ(Held(*b).size(), static_cast<size_t>(kShards));  // a's membership expired too
  EXPECT_EQ(b->Snapshot().takeovers, static_cast<uint64_t>(kShards));
}

TEST_F(ShardKeeperTest, ReleaseAllHandsEveryShardOverAtOnce) {
  auto a = Replica("a");
  auto b = Replica("b");
  ASSERT_TRUE(a->Tick().ok());
  ASSERT_TRUE(b->Tick().ok());
  ASSERT_TRUE(a->ReleaseAll().ok());
  EXPECT_TRUE(Held(*a).empty());
  ASSERT_TRUE(b->Tick().ok());  // no wait for expiry, and a is no member any more
  EXPECT_EQ(Held(*b).size(), static_cast<size_t>(kShards));
  EXPECT_EQ(b->Snapshot().live_replicas, 1);
  EXPECT_EQ(b->Snapshot().takeovers, 0u);
}

TEST_F(ShardKeeperTest, OwnsTargetFollowsTheShardMap) {
  auto a = Replica("a");
  auto b = Replica("b");
  ASSERT_TRUE(a->Tick().ok());
  ASSERT_TRUE(b->Tick().ok());
  ASSERT_TRUE(a->Tick().ok());
  ASSERT_TRUE(b->Tick().ok());
  for (int i = 0; i < 40; ++i) {
    std::string key = "proj/c" + std::to_string(i);
    EXPECT_NE(a->OwnsTarget(key), b->OwnsTarget(key)) << key;  // exactly one owns each
    EXPECT_EQ(a->OwnsTarget(key), a->Holds(ShardOf(key, kShards)));
  }
}

TEST_F(ShardKeeperTest, ReplicasThatDisagreeOnTheShardCountHoldNothing) {
  // Their maps would send a target to two replicas; neither acts until they agree.
  auto a = Replica("a");
  ASSERT_TRUE(a->Tick().ok());
  ShardConfig other;
  other.identity = "b";
  other.shards = kShards * 2;
  other.join_rounds = 0;
  ShardKeeper b(*client_, env_, other);
  Status s = b.Tick();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("same --shards"), std::string::npos) << s.ToString();
  EXPECT_TRUE(b.Snapshot().held.empty());
  env_.Advance(2s);
  EXPECT_FALSE(a->Tick().ok());  // a sees b's membership too, and lets go
  EXPECT_TRUE(Held(*a).empty());
  EXPECT_FALSE(a->OwnsTarget("proj/c1"));
}

TEST_F(ShardKeeperTest, ReplicasStartedTogetherSeeEachOtherBeforeTakingShards) {
  ShardConfig c;
  c.shards = kShards;  // the default join round
  c.identity = "a";
  ShardKeeper a(*client_, env_, c);
  c.identity = "b";
  ShardKeeper b(*client_, env_, c);
  ASSERT_TRUE(a.Tick().ok());  // announces itself, takes nothing
  ASSERT_TRUE(b.Tick().ok());
  EXPECT_TRUE(Held(a).empty());
  EXPECT_TRUE(Held(b).empty());
  env_.Advance(2s);
  ASSERT_TRUE(a.Tick().ok());  // sees b: takes half, not all
  ASSERT_TRUE(b.Tick().ok());
  EXPECT_EQ(Held(a).size(), static_cast<size_t>(kShards / 2));
  EXPECT_EQ(Held(b).size(), static_cast<size_t>(kShards / 2));
  EXPECT_EQ(a.Snapshot().released, 0u);  // nothing taken only to be given back
}

}  // namespace
}  // namespace tpu::shard
