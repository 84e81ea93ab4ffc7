// ComputeClient against the cloud emulator: the TPUNodeGroup resources
// (workload policy → template → MIG) inserted, read, listed, resized and
// deleted, with their operations polled and waited on.
#include "cloud/compute_client.h"

#include <gtest/gtest.h>

#include "cloud/emulator_fixture.h"

namespace tpu::cloud {
namespace {

class ComputeClientTest : public testing::EmulatorTest {
 protected:
  ComputeClient& compute() { return cloud_->compute(); }
};

TEST_F(ComputeClientTest, NodeGroupResourcesLifecycle) {
  WorkloadPolicy wp;
  wp.name = "wp-1";
  wp.region = "us-central1";
  wp.type = "HIGH_THROUGHPUT";
  wp.accelerator_topology = "4x4x4";
  wp.description = kComputeMarker;
  auto op = compute().InsertWorkloadPolicy("proj-c", wp);
  ASSERT_TRUE(op.ok()) << op.status().ToString();
  EXPECT_EQ(op->api, Operation::Api::kCompute);
  EXPECT_EQ(op->scope, "regions");
  EXPECT_EQ(op->location, "us-central1");
  EXPECT_FALSE(AwaitDone(*op).failed());
  auto got = compute().GetWorkloadPolicy("proj-c", "us-central1", "wp-1");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->accelerator_topology, "4x4x4");
  EXPECT_EQ(got->region, "us-central1");
  EXPECT_EQ(got->description, kComputeMarker);

  InstanceTemplate t;
  t.name = "tmpl-1";
  t.description = kComputeMarker;
  t.machine_type = "tpu7x-standard-4t";
  t.provisioning_model = "RESERVATION_BOUND";  // bulk mode's provisioning model
  t.reservation = "res-1";
  t.boot_disk_size_gb = 100;
  t.source_image = "projects/cos-cloud/global/images/family/cos-stable";
  auto top = compute().InsertInstanceTemplate("proj-c", t);
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  EXPECT_EQ(top->scope, "global");
  AwaitDone(*top);
  auto tgot = compute().GetInstanceTemplate("proj-c", "tmpl-1");
  ASSERT_TRUE(tgot.ok()) << tgot.status().ToString();
  EXPECT_EQ(tgot->machine_type, "tpu7x-standard-4t");
  EXPECT_EQ(tgot->boot_disk_size_gb, 100);

  InstanceGroupManager m;
  m.name = "slice-1";
  m.zone = "us-central1-a";
  m.description = kComputeMarker;
  m.instance_template = "projects/proj-c/global/instanceTemplates/tmpl-1";
  m.target_size = 16;
  m.target_size_policy_mode = "BULK";
  auto mop = compute().InsertInstanceGroupManager("proj-c", m);
  ASSERT_TRUE(mop.ok()) << mop.status().ToString();
  EXPECT_EQ(mop->scope, "zones");
  EXPECT_EQ(mop->location, "us-central1-a");
  // The server-side wait returns the finished operation.
  auto waited = compute().WaitOperation(*mop);
  ASSERT_TRUE(waited.ok()) << waited.status().ToString();
  EXPECT_TRUE(waited->done());
  auto mgot = compute().GetInstanceGroupManager("proj-c", "us-central1-a", "slice-1");
  ASSERT_TRUE(mgot.ok()) << mgot.status().ToString();
  EXPECT_EQ(mgot->target_size, 16);
  EXPECT_EQ(mgot->zone, "us-central1-a");

  auto rop = compute().ResizeInstanceGroupManager("proj-c", "us-central1-a", "slice-1", 8);
  ASSERT_TRUE(rop.ok()) << rop.status().ToString();
  AwaitDone(*rop);
  EXPECT_EQ(compute().GetInstanceGroupManager("proj-c", "us-central1-a", "slice-1")->target_size, 8);

  auto igms = compute().ListInstanceGroupManagers("proj-c");
  ASSERT_TRUE(igms.ok());
  ASSERT_EQ(igms->size(), 1u);
  EXPECT_EQ((*igms)[0].zone, "us-central1-a");
  auto policies = compute().ListWorkloadPolicies("proj-c");
  ASSERT_TRUE(policies.ok());
  ASSERT_EQ(policies->size(), 1u);
  EXPECT_EQ((*policies)[0].region, "us-central1");

  // Deletes in reverse dependency order.
  AwaitDone(*compute().DeleteInstanceGroupManager("proj-c", "us-central1-a", "slice-1"));
  AwaitDone(*compute().DeleteInstanceTemplate("proj-c", "tmpl-1"));
  AwaitDone(*compute().DeleteWorkloadPolicy("proj-c", "us-central1", "wp-1"));
  auto gone = compute().GetInstanceTemplate("proj-c", "tmpl-1");
  ASSERT_FALSE(gone.ok());
  EXPECT_TRUE(gone.error().not_found());
  EXPECT_TRUE(compute().ListInstanceTemplates("proj-c")->empty());
}

TEST_F(ComputeClientTest, MigWithMissingTemplateIsInvalidArgumentWithTheApiMessage) {
  InstanceGroupManager m;
  m.name = "orphan";
  m.zone = "us-central1-a";
  m.instance_template = "projects/proj-c/global/instanceTemplates/nope";
  m.target_size = 1;
  auto op = compute().InsertInstanceGroupManager("proj-c", m);
  ASSERT_FALSE(op.ok());
  EXPECT_EQ(op.error().http_status, 400);
  EXPECT_FALSE(op.error().retryable());
  EXPECT_EQ(op.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(op.error().message.find("does not exist"), std::string::npos) << op.error().message;
}

TEST_F(ComputeClientTest, OperationsListFindsRunningOnes) {
  StartEmulator(/*op_latency_ms=*/600'000);
  InstanceTemplate t;
  t.name = "slow";
  t.machine_type = "n2-standard-2";
  auto op = compute().InsertInstanceTemplate("proj-c", t);
  ASSERT_TRUE(op.ok()) << op.status().ToString();
  auto running = compute().ListOperations("proj-c", /*only_running=*/true);
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  ASSERT_EQ(running->size(), 1u);
  EXPECT_EQ((*running)[0].name, op->name);
  EXPECT_EQ((*running)[0].scope, "global");
  auto polled = cloud_->poller().Poll((*running)[0]);
  ASSERT_TRUE(polled.ok()) << polled.status().ToString();
  EXPECT_FALSE(polled->done());
}

}  // namespace
}  // namespace tpu::cloud
