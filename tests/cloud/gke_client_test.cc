// GkeClient against the cloud emulator: every node pool verb, operations get
// and list, and the errors the executor must tell apart.
#include "cloud/gke_client.h"

#include <gtest/gtest.h>

#include "cloud/emulator_fixture.h"

namespace tpu::cloud {
namespace {

const ClusterRef kCluster{"proj-a", "us-east5", "train"};

NodePool CpuPool(const std::string& name, int nodes) {
  NodePool p;
  p.name = name;
  p.machine_type = "e2-standard-4";
  p.node_count = nodes;
  p.resource_labels = StringMap{{kManagedLabel, "true"}};
  p.labels = StringMap{{"role", "test"}};
  return p;
}

class GkeClientTest : public testing::EmulatorTest {
 protected:
  void SetUp() override {
    EmulatorTest::SetUp();
    ASSERT_TRUE(emulator_->EnsureCluster(kCluster.project, kCluster.location, kCluster.cluster).ok());
  }
  GkeClient& gke() { return cloud_->gke(); }
};

TEST_F(GkeClientTest, NodePoolLifecycle) {
  auto create = gke().CreateNodePool(kCluster, CpuPool("np-1", 2));
  ASSERT_TRUE(create.ok()) << create.status().ToString();
  EXPECT_EQ(create->operation_type, "CREATE_NODE_POOL");
  EXPECT_EQ(create->project, "proj-a");
  EXPECT_EQ(create->location, "us-east5");
  Operation done = AwaitDone(*create);
  EXPECT_FALSE(done.failed()) << done.error_message;

  NodePoolRef ref{kCluster, "np-1"};
  auto pool = gke().GetNodePool(ref);
  ASSERT_TRUE(pool.ok()) << pool.status().ToString();
  EXPECT_EQ(pool->status, "RUNNING");
  EXPECT_EQ(pool->node_count, 2);
  EXPECT_EQ(pool->resource_labels->at(kManagedLabel), "true");
  EXPECT_EQ(pool->disk_type, "pd-balanced");  // server default

  NodePoolUpdate update;
  update.labels = StringMap{{"role", "changed"}};
  update.taints = std::vector<NodeTaint>{{"k", "v", "NO_SCHEDULE"}};
  update.resource_labels = StringMap{{kManagedLabel, "true"}, {"extra", "1"}};
  update.tags = std::vector<std::string>{"t1"};
  auto upd = gke().UpdateNodePool(ref, update);
  ASSERT_TRUE(upd.ok()) << upd.status().ToString();
  AwaitDone(*upd);
  pool = gke().GetNodePool(ref);
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ(pool->labels->at("role"), "changed");
  ASSERT_TRUE(pool->taints.has_value());
  EXPECT_EQ(pool->taints->size(), 1u);
  EXPECT_EQ(pool->resource_labels->at("extra"), "1");
  EXPECT_EQ(pool->tags, std::vector<std::string>{"t1"});

  auto size = gke().SetNodePoolSize(ref, 3);
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  EXPECT_EQ(size->operation_type, "SET_NODE_POOL_SIZE");
  AwaitDone(*size);

  auto as = gke().SetNodePoolAutoscaling(ref, {true, 1, 4, ""});
  ASSERT_TRUE(as.ok()) << as.status().ToString();
  AwaitDone(*as);
  // The cluster is in a release channel: auto-upgrade stays on, auto-repair may go.
  auto mg = gke().SetNodePoolManagement(ref, {false, true});
  ASSERT_TRUE(mg.ok()) << mg.status().ToString();
  AwaitDone(*mg);
  pool = gke().GetNodePool(ref);
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ(pool->autoscaling, (NodePoolAutoscaling{true, 1, 4, ""}));
  EXPECT_EQ(pool->management, (NodeManagement{false, true}));

  auto del = gke().DeleteNodePool(ref);
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  EXPECT_EQ(del->operation_type, "DELETE_NODE_POOL");
  AwaitDone(*del);
  auto gone = gke().GetNodePool(ref);
  ASSERT_FALSE(gone.ok());
  EXPECT_TRUE(gone.error().not_found());
  EXPECT_FALSE(gone.error().retryable());
  EXPECT_EQ(gone.status().code(), Status::Code::kNotFound);
}

TEST_F(GkeClientTest, AlreadyExistsIs409) {
  AwaitDone(*gke().CreateNodePool(kCluster, CpuPool("dup", 1)));
  auto again = gke().CreateNodePool(kCluster, CpuPool("dup", 1));
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(again.error().already_exists()) << again.status().ToString();
  EXPECT_EQ(again.status().code(), Status::Code::kAlreadyExists);
}

TEST_F(GkeClientTest, ListClustersEmbedsPools) {
  AwaitDone(*gke().CreateNodePool(kCluster, CpuPool("a", 1)));
  AwaitDone(*gke().CreateNodePool(kCluster, CpuPool("b", 1)));
  ASSERT_TRUE(emulator_->EnsureCluster("proj-a", "europe-west4", "eu").ok());
  auto clusters = gke().ListClusters("proj-a");
  ASSERT_TRUE(clusters.ok()) << clusters.status().ToString();
  ASSERT_EQ(clusters->size(), 2u);
  size_t pools = 0;
  for (const auto& c : *clusters) {
    EXPECT_EQ(c.project, "proj-a");
    pools += c.node_pools.size();
  }
  EXPECT_EQ(pools, 2u);
}

class SlowGkeClientTest : public GkeClientTest {
 protected:
  void SetUp() override {
    StartEmulator(/*op_latency_ms=*/600'000);  // operations stay RUNNING for the test
    ASSERT_TRUE(emulator_->EnsureCluster(kCluster.project, kCluster.location, kCluster.cluster).ok());
  }
};

TEST_F(SlowGkeClientTest, SecondOperationOnABusyPoolIsIncompatibleAndRetryable) {
  auto first = gke().CreateNodePool(kCluster, CpuPool("one", 1));
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(first->done());
  // Another pool of the cluster may start at once; the same pool may not.
  auto other = gke().CreateNodePool(kCluster, CpuPool("two", 1));
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  auto second = gke().DeleteNodePool({kCluster, "one"});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().http_status, 400);
  EXPECT_EQ(second.error().status, "FAILED_PRECONDITION");
  EXPECT_TRUE(second.error().incompatible_operation()) << second.status().ToString();
  EXPECT_TRUE(second.error().retryable());
  EXPECT_NE(second.error().message.find("Please wait and try again once it is done"), std::string::npos);
  // Past the cluster's quota of concurrent operations: 429, retryable.
  for (int i = 3; i <= 5; ++i) ASSERT_TRUE(gke().CreateNodePool(kCluster, CpuPool("p" + std::to_string(i), 1)).ok());
  auto sixth = gke().CreateNodePool(kCluster, CpuPool("p6", 1));
  ASSERT_FALSE(sixth.ok());
  EXPECT_TRUE(sixth.error().rate_limited()) << sixth.status().ToString();
  EXPECT_EQ(sixth.error().status, "RESOURCE_EXHAUSTED");
  EXPECT_TRUE(sixth.error().retryable());

  // Crash recovery finds the running operation in the project-wide list.
  auto ops = gke().ListOperations("proj-a");
  ASSERT_TRUE(ops.ok()) << ops.status().ToString();
  bool found = false;
  for (const auto& op : *ops) {
    if (op.name == first->name) {
      found = true;
      EXPECT_FALSE(op.done());
      EXPECT_EQ(op.location, "us-east5");
      EXPECT_NE(op.target_link.find("nodePools/one"), std::string::npos);
    }
  }
  EXPECT_TRUE(found);
  auto polled = cloud_->poller().Poll(*first);
  ASSERT_TRUE(polled.ok());
  EXPECT_EQ(polled->name, first->name);
  EXPECT_FALSE(polled->done());
}

TEST_F(GkeClientTest, InjectedFaultsAreClassified) {
  sim::FaultConfig faults;
  sim::FaultRule r429;
  r429.method = "GET";
  r429.path = "clusters$";
  r429.rate_429 = 1.0;
  faults.rules.push_back(r429);
  ASSERT_TRUE(emulator_->SetFaults(faults).ok());
  auto r = gke().ListClusters("proj-a");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().rate_limited());
  EXPECT_TRUE(r.error().retryable());

  faults.rules[0].rate_429 = 0;
  faults.rules[0].rate_quota = 1.0;
  faults.rules[0].method = "POST";
  faults.rules[0].path = "nodePools$";
  ASSERT_TRUE(emulator_->SetFaults(faults).ok());
  auto q = gke().CreateNodePool(kCluster, CpuPool("q", 1));
  ASSERT_FALSE(q.ok());
  EXPECT_TRUE(q.error().quota_exceeded()) << q.status().ToString();
  EXPECT_FALSE(q.error().retryable());

  faults.rules[0].rate_quota = 0;
  faults.rules[0].rate_drop = 1.0;
  ASSERT_TRUE(emulator_->SetFaults(faults).ok());
  auto d = gke().CreateNodePool(kCluster, CpuPool("d", 1));
  ASSERT_FALSE(d.ok());
  EXPECT_TRUE(d.error().retryable()) << d.status().ToString();
  EXPECT_EQ(d.error().http_status, 0);
}

}  // namespace
}  // namespace tpu::cloud
