// GKE's concurrent-operation rules in the emulator (docs/emulator.md,
// "Concurrency"): operations on different pools of a cluster run together up
// to the cluster's quota (429 RESOURCE_EXHAUSTED past it), a second operation
// on a busy pool and anything during a cluster-level operation get 400
// FAILED_PRECONDITION. Each test asserts the status, the error's `status` and
// its message.
#include "sim_test_util.h"

namespace tpu::sim::testing {
namespace {

class GkeConcurrencyTest : public EmulatorTest {
 protected:
  // Creates that stay running for the whole test; everything else is quick.
  void StartSlow(int quota = 5) {
    CloudEmulatorOptions o = FastOptions();
    o.op_latency_ms = {{"default", 20}, {"CREATE_NODE_POOL", 30000}, {"CREATE_CLUSTER", 30000}};
    o.concurrent_operations_quota = quota;
    StartWith(o);
  }
  HttpResult Create(const std::string& name, const std::string& cluster = "c1") {
    json pool = {{"name", name}, {"initialNodeCount", 1}, {"config", {{"machineType", "ct6e-standard-4t"}}}};
    return http_->Post(Pools(cluster), {{"nodePool", pool}});
  }
  int64_t Peak(const std::string& cluster = "p1/us-central1-a/c1") {
    auto c = emu_->counters().peak_operations_by_cluster;
    return c.count(cluster) ? c.at(cluster) : 0;
  }
};

TEST_F(GkeConcurrencyTest, OperationsOnDifferentPoolsRunTogetherUpToTheQuota) {
  StartSlow();
  for (int i = 0; i < 5; ++i) {
    auto r = Create("pool-" + std::to_string(i));
    ASSERT_EQ(r.status, 200) << i << " " << r.raw;
  }
  EXPECT_EQ(Peak(), 5);
  auto sixth = Create("pool-5");
  EXPECT_EQ(sixth.status, 429);
  EXPECT_EQ(sixth.body["error"]["code"], 429);
  EXPECT_EQ(sixth.body["error"]["status"], "RESOURCE_EXHAUSTED");
  EXPECT_EQ(sixth.body["error"]["message"],
            "Too many operations: cluster \"c1\" hits the concurrent operations quota 5, please try "
            "again later.");
  EXPECT_EQ(http_->Get(Pools() + "/pool-5").status, 404) << "a refused create makes nothing";
  // Another cluster has a quota of its own.
  ASSERT_TRUE(emu_->EnsureCluster("p1", "us-central1-a", "c2").ok());
  EXPECT_EQ(Create("pool-0", "c2").status, 200);
  // The running operations are listed, for a client that restarts and must wait for them.
  int running = 0;
  const json ops = http_->Get("/v1/projects/p1/locations/-/operations").body["operations"];
  for (const auto& op : ops) running += op["status"] != "DONE";
  EXPECT_EQ(running, 6);
}

TEST_F(GkeConcurrencyTest, TheQuotaIsConfigurableAndFreesWhenAnOperationEnds) {
  CloudEmulatorOptions o = FastOptions();
  o.op_latency_ms = {{"default", 300}};
  o.concurrent_operations_quota = 2;
  StartWith(o);
  auto a = Create("a");
  ASSERT_EQ(a.status, 200) << a.raw;
  ASSERT_EQ(Create("b").status, 200);
  auto c = Create("c");
  EXPECT_EQ(c.status, 429);
  EXPECT_EQ(c.body["error"]["status"], "RESOURCE_EXHAUSTED");
  EXPECT_EQ(c.body["error"]["message"],
            "Too many operations: cluster \"c1\" hits the concurrent operations quota 2, please try "
            "again later.");
  WaitGke(a.body);
  EXPECT_EQ(Create("c").status, 200) << "a finished operation frees its place";
  EXPECT_EQ(Peak(), 2);
}

TEST_F(GkeConcurrencyTest, ASecondOperationOnABusyPoolIsRefused) {
  StartSlow();
  auto create = Create("a");
  ASSERT_EQ(create.status, 200) << create.raw;
  const std::string op = create.body["name"];
  for (const auto& second : {http_->Delete(Pools() + "/a"),
                             http_->Post(Pools() + "/a:setSize", {{"nodeCount", 2}}),
                             http_->Put(Pools() + "/a", {{"labels", {{"labels", {{"x", "y"}}}}}})}) {
    EXPECT_EQ(second.status, 400) << second.raw;
    EXPECT_EQ(second.body["error"]["status"], "FAILED_PRECONDITION");
    EXPECT_EQ(second.body["error"]["message"],
              "Operation " + op + " is currently creating a node pool for cluster c1. Please wait "
              "and try again once it is done.");
  }
  // Another pool of the same cluster is not blocked.
  EXPECT_EQ(Create("b").status, 200);
}

TEST_F(GkeConcurrencyTest, AClusterLevelOperationExcludesEveryOther) {
  StartSlow();
  auto cluster = http_->Post("/v1/projects/p1/locations/us-central1-a/clusters",
                             {{"cluster", {{"name", "new"}, {"initialNodeCount", 1}}}});
  ASSERT_EQ(cluster.status, 200) << cluster.raw;
  EXPECT_EQ(cluster.body["operationType"], "CREATE_CLUSTER");
  const std::string op = cluster.body["name"];
  auto pool = Create("a", "new");
  EXPECT_EQ(pool.status, 400);
  EXPECT_EQ(pool.body["error"]["status"], "FAILED_PRECONDITION");
  EXPECT_EQ(pool.body["error"]["message"], "Cluster is running incompatible operation " + op + ".");
  // And a cluster-level operation waits for the pools' operations.
  auto busy = Create("b");
  ASSERT_EQ(busy.status, 200);
  auto del = http_->Delete("/v1/projects/p1/locations/us-central1-a/clusters/c1");
  EXPECT_EQ(del.status, 400);
  EXPECT_EQ(del.body["error"]["status"], "FAILED_PRECONDITION");
  EXPECT_EQ(del.body["error"]["message"],
            "Cluster is running incompatible operation " + busy.body["name"].get<std::string>() + ".");
}

}  // namespace
}  // namespace tpu::sim::testing
