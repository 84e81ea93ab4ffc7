// ComputeClient against the cloud emulator: the TPUNodeGroup resources
// (workload policy → template → MIG) inserted, read, listed, resized and
// deleted, with their operations polled and waited on; a MIG's instances
// listed (every page), read, given metadata under the fingerprint rule and
// deleted. One test uses a canned transport to see what leaves the client.
#include "cloud/compute_client.h"

#include <gtest/gtest.h>

#include <set>

#include "cloud/emulator_fixture.h"
#include "sim/cloud_faults.h"

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


class ComputeInstancesTest : public ComputeClientTest {
 protected:
  // A template with one metadata item and a group of `size` from it.
  void MakeGroup(int size, bool op_fails = false) {
    InstanceTemplate t;
    t.name = "tmpl-i";
    t.machine_type = "tpu7x-standard-4t";
    t.metadata = {{"role", "worker"}};
    auto top = compute().InsertInstanceTemplate("proj-c", t);
    ASSERT_TRUE(top.ok()) << top.status().ToString();
    AwaitDone(*top);
    InstanceGroupManager m;
    m.name = "slice-i";
    m.zone = "us-central1-a";
    m.instance_template = "projects/proj-c/global/instanceTemplates/tmpl-i";
    m.target_size = size;
    auto mop = compute().InsertInstanceGroupManager("proj-c", m);
    ASSERT_TRUE(mop.ok()) << mop.status().ToString();
    EXPECT_EQ(AwaitDone(*mop).failed(), op_fails);
  }
};

TEST_F(ComputeInstancesTest, ListGetSetMetadataAndDelete) {
  MakeGroup(2);
  cloud_->calls().Reset();
  auto members = compute().ListManagedInstances("proj-c", "us-central1-a", "slice-i");
  ASSERT_TRUE(members.ok()) << members.status().ToString();
  EXPECT_EQ(cloud_->calls().mutations(), 0) << "listManagedInstances is a read";
  ASSERT_EQ(members->size(), 2u);
  for (const auto& m : *members) {
    EXPECT_EQ(m.instance_status, "RUNNING");
    EXPECT_EQ(m.current_action, "NONE");
    EXPECT_TRUE(m.errors.empty());
    EXPECT_EQ(m.name.rfind("slice-i-", 0), 0u) << m.name;
    EXPECT_TRUE(m.instance.ends_with("/projects/proj-c/zones/us-central1-a/instances/" + m.name)) << m.instance;
  }
  auto group = compute().GetInstanceGroupManager("proj-c", "us-central1-a", "slice-i");
  ASSERT_TRUE(group.ok());
  EXPECT_EQ(group->current_actions.none, 2);
  EXPECT_EQ(group->current_actions.creating, 0);

  const std::string name = (*members)[0].name;
  auto got = compute().GetInstance("proj-c", "us-central1-a", name);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->name, name);
  EXPECT_EQ(got->zone, "us-central1-a");
  EXPECT_EQ(got->status, "RUNNING");
  ASSERT_EQ(got->metadata.size(), 2u);
  EXPECT_EQ(got->metadata[0], (std::pair<std::string, std::string>{"role", "worker"}));
  EXPECT_EQ(got->metadata[1].first, "created-by");
  EXPECT_FALSE(got->metadata_fingerprint.empty());

  std::vector<std::pair<std::string, std::string>> items = got->metadata;
  items.emplace_back("bootstrap-token", "tok-secret-123");
  auto set = compute().SetInstanceMetadata("proj-c", "us-central1-a", name, got->metadata_fingerprint, items);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->scope, "zones");
  EXPECT_EQ(set->location, "us-central1-a");
  EXPECT_FALSE(AwaitDone(*set).failed());
  auto after = compute().GetInstance("proj-c", "us-central1-a", name);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->metadata, items);
  EXPECT_NE(after->metadata_fingerprint, got->metadata_fingerprint);

  // The fingerprint read before the change is stale now; none at all is too.
  for (const std::string& fp : {got->metadata_fingerprint, std::string()}) {
    auto stale = compute().SetInstanceMetadata("proj-c", "us-central1-a", name, fp, items);
    ASSERT_FALSE(stale.ok());
    EXPECT_TRUE(stale.error().precondition_failed());
    EXPECT_EQ(stale.error().http_status, 412);
    EXPECT_EQ(stale.error().reason, "conditionNotMet");
    EXPECT_FALSE(stale.error().retryable());
    EXPECT_EQ(stale.status().code(), Status::Code::kFailedPrecondition);
  }

  auto del = compute().DeleteInstance("proj-c", "us-central1-a", name);
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  EXPECT_EQ(del->scope, "zones");
  AwaitDone(*del);
  auto gone = compute().GetInstance("proj-c", "us-central1-a", name);
  ASSERT_FALSE(gone.ok());
  EXPECT_TRUE(gone.error().not_found());
  EXPECT_EQ(compute().ListManagedInstances("proj-c", "us-central1-a", "slice-i")->size(), 1u);
}

TEST_F(ComputeInstancesTest, ListManagedInstancesFollowsEveryPage) {
  InstanceTemplate t;
  t.name = "tmpl-p";
  t.machine_type = "n2-standard-2";
  AwaitDone(*compute().InsertInstanceTemplate("proj-c", t));
  // A PAGINATED group pages at maxResults (500); ours has more.
  http::HttpRequest req;
  req.method = "POST";
  req.url = emulator_->endpoint() + "/compute/v1/projects/proj-c/zones/us-central1-a/instanceGroupManagers";
  req.headers = {{"Authorization", "Bearer emu-token"}, {"Content-Type", "application/json"}};
  req.body = nlohmann::json({{"name", "big"}, {"instanceTemplate", "global/instanceTemplates/tmpl-p"},
                             {"targetSize", 503}, {"listManagedInstancesResults", "PAGINATED"}})
                 .dump();
  auto res = cloud_->transport().Send(req);
  ASSERT_TRUE(res.ok());
  ASSERT_EQ(res->status, 200) << res->body;
  cloud_->calls().Reset();
  auto all = compute().ListManagedInstances("proj-c", "us-central1-a", "big");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->size(), 503u);
  EXPECT_EQ(cloud_->calls().reads(), 2);
  std::set<std::string> names;
  for (const auto& m : *all) names.insert(m.name);
  EXPECT_EQ(names.size(), 503u);
}

TEST_F(ComputeInstancesTest, AFailedCreationReportsItsErrors) {
  sim::FaultConfig faults;
  sim::FaultRule rule;
  rule.method = "POST";
  rule.path = "instanceGroupManagers$";
  rule.rate_op_failure = 1;
  faults.rules.push_back(rule);
  ASSERT_TRUE(emulator_->SetFaults(faults).ok());
  MakeGroup(1, /*op_fails=*/true);
  auto members = compute().ListManagedInstances("proj-c", "us-central1-a", "slice-i");
  ASSERT_TRUE(members.ok()) << members.status().ToString();
  ASSERT_EQ(members->size(), 1u);
  EXPECT_EQ((*members)[0].current_action, "CREATING");
  EXPECT_EQ((*members)[0].instance_status, "");
  EXPECT_EQ((*members)[0].errors,
            std::vector<std::string>{"INTERNAL_ERROR: Internal error. Please try again."});
  auto group = compute().GetInstanceGroupManager("proj-c", "us-central1-a", "slice-i");
  ASSERT_TRUE(group.ok());
  EXPECT_EQ(group->current_actions.creating, 1);
  EXPECT_EQ(group->status, "UPDATING");
}

// What SetInstanceMetadata sends, and that an error quoting a value we sent
// does not carry the value out.
class CannedTransport : public http::HttpTransport {
 public:
  Result<http::HttpResponse> Send(const http::HttpRequest& request) override {
    sent = request;
    http::HttpResponse r;
    r.status = 400;
    r.body = R"({"error":{"code":400,"status":"INVALID_ARGUMENT","message":"Invalid value 'tok-secret-123' for items[0].value","errors":[{"reason":"invalid","message":"Invalid value 'tok-secret-123'"}]}})";
    return r;
  }
  http::HttpRequest sent;
};

// Reservations are read only: listed in their owner project (every page of
// the aggregated list) and got by zone and name, a shared one from its owner.
TEST_F(ComputeClientTest, ReservationsListedEveryPageAndGot) {
  nlohmann::json reservations = nlohmann::json::array();
  for (int i = 0; i < 501; ++i) {
    reservations.push_back({{"name", "bulk-" + std::to_string(i)}, {"project", "proj-r"},
                            {"zone", i % 2 ? "us-central1-a" : "us-central1-b"},
                            {"machineType", "ct6e-standard-4t"}, {"count", 1}});
  }
  reservations.push_back({{"name", "shared"}, {"project", "proj-r"}, {"zone", "us-central1-a"},
                          {"machineType", "tpu7x-standard-4t"}, {"count", 16},
                          {"specificReservationRequired", true}, {"shared", {"proj-x", "proj-y"}},
                          {"deploymentType", "DENSE"}, {"blockCount", 2}});
  emulator_->SetCapacity({{"reservations", reservations}});
  cloud_->calls().Reset();
  auto listed = compute().ListReservations("proj-r");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(listed->size(), 502u);
  EXPECT_EQ(cloud_->calls().reads(), 2) << "two pages of at most 500";
  std::set<std::string> names;
  for (const auto& r : *listed) names.insert(r.name);
  EXPECT_EQ(names.size(), 502u);

  auto got = compute().GetReservation("proj-r", "us-central1-a", "shared");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->project, "proj-r");
  EXPECT_EQ(got->zone, "us-central1-a");
  EXPECT_EQ(got->count, 16);
  EXPECT_EQ(got->in_use_count, 0);
  EXPECT_EQ(got->free_count(), 16);
  EXPECT_EQ(got->machine_type, "tpu7x-standard-4t");
  EXPECT_TRUE(got->specific_reservation_required);
  EXPECT_EQ(got->share_type, "SPECIFIC_PROJECTS");
  EXPECT_EQ(got->shared_with, (std::vector<std::string>{"proj-x", "proj-y"}));
  EXPECT_EQ(got->deployment_type, "DENSE");
  EXPECT_EQ(got->block_count, 2);
  EXPECT_EQ(got->status, "READY");
  EXPECT_EQ(got->shared_name(), "projects/proj-r/reservations/shared");
  EXPECT_EQ(got->self_link,
            "https://www.googleapis.com/compute/v1/projects/proj-r/zones/us-central1-a/reservations/shared");

  auto missing = compute().GetReservation("proj-x", "us-central1-a", "shared");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.error().not_found()) << "shared, but owned by proj-r";
}

TEST(ComputeInstanceCallsTest, SetMetadataSendsFingerprintAndItemsAndRedactsValuesFromErrors) {
  CannedTransport transport;
  StaticTokenProvider tokens("t");
  ApiCaller caller(&transport, &tokens, nullptr);
  ComputeClient compute(&caller, "https://compute.example/compute/v1/");
  auto r = compute.SetInstanceMetadata("p", "z", "vm-1", "fp==", {{"bootstrap-token", "tok-secret-123"}});
  EXPECT_EQ(transport.sent.method, "POST");
  EXPECT_EQ(transport.sent.url, "https://compute.example/compute/v1/projects/p/zones/z/instances/vm-1/setMetadata");
  EXPECT_EQ(nlohmann::json::parse(transport.sent.body),
            nlohmann::json({{"fingerprint", "fp=="},
                            {"items", {{{"key", "bootstrap-token"}, {"value", "tok-secret-123"}}}}}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.find("tok-secret-123"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.status().ToString().find("tok-secret-123"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.error().message.find("<redacted>"), std::string::npos);
}

}  // namespace
}  // namespace tpu::cloud
