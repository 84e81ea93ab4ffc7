// DWS flex-start with Kueue against the Kubernetes API emulator: our
// ProvisioningRequestConfig and AdmissionCheck follow git's flex-start pools;
// our rule joins the ClusterQueue's admissionChecksStrategy beside a person's
// (v1beta2 by SSA on the keyed list, v1beta1 by merging the atomic one) and
// leaves with the last flex-start pool; cohort mode and a queue using
// spec.admissionChecks are reported, not written; bookings are read from
// ProvisioningRequests, and a live one holds its pool's delete.
#include "kueue/flex_start_sync.h"

#include <gtest/gtest.h>

#include "kube/status_errors.h"
#include "kueue/bookings.h"
#include "kueue/flex_start.h"
#include "kueue/kueue_test_util.h"
#include "kueue/scale_down.h"

namespace tpu::kueue {
namespace {

namespace testing = kube::testing;
namespace res = kube::resources;
using testing::Pool;

constexpr const char* kFlexFlavor = "tpu-v5-lite-podslice-2x4";

manifest::TPUNodePool FlexPool(const std::string& name) {
  auto p = Pool(name, "v5e", "2x4", 1, "ct5lp-hightpu-8t");
  p.capacity.type = manifest::CapacityType::kFlexStart;
  p.autoscaling = manifest::Autoscaling{true, 0, 1};
  return p;
}

KueueConfig QueueConfig() {
  KueueConfig c;
  c.cluster_queue = "tpu-queue";
  return c;
}

json Rules(kube::KubeClient& client, const kube::ResourceRef& cq) {
  auto q = client.Get(cq, "", "tpu-queue");
  if (!q.ok() || !(*q)["spec"].contains("admissionChecksStrategy")) return json::array();
  return (*q)["spec"]["admissionChecksStrategy"].value("admissionChecks", json::array());
}

// A person's rule and preemption on the queue, as their own apply.
void HumanEdits(kube::KubeClient& client, const kube::ResourceRef& cq, const json& rules) {
  json obj = {{"apiVersion", cq.ApiVersion()}, {"kind", "ClusterQueue"}, {"metadata", {{"name", "tpu-queue"}}},
              {"spec", {{"preemption", {{"withinClusterQueue", "LowerPriority"}}},
                        {"admissionChecksStrategy", {{"admissionChecks", rules}}}}}};
  auto r = client.Apply(cq, "", obj, {"kubectl", true, ""});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
}

void ExpectFollowsGit(const std::string& version) {
  kubesim::KubeApiServer::Options o;
  o.kueue_versions = {version};
  testing::Cluster c(o);
  QuotaSync quota(*c.client, QueueConfig());
  FlexStartSync flex(*c.client, quota);
  const kube::ResourceRef cq = res::kClusterQueues.AtVersion(version);
  auto with = testing::Target({Pool("fixed", "v5p", "2x2x1", 1), FlexPool("dws")});
  ASSERT_TRUE(quota.Sync(with).ok());
  HumanEdits(*c.client, cq, json::array({{{"name", "human-check"}}}));

  auto report = flex.Sync(with);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->attached);
  EXPECT_EQ(report->flavors, std::vector<std::string>{kFlexFlavor});
  auto prc = c.client->Get(res::kProvisioningRequestConfigs.AtVersion(version), "", kFlexStartConfig);
  ASSERT_TRUE(prc.ok()) << prc.status().ToString();
  EXPECT_EQ((*prc)["spec"]["provisioningClassName"], "queued-provisioning.gke.io");
  EXPECT_EQ((*prc)["spec"]["managedResources"], json::array({"google.com/tpu"}));
  auto ac = c.client->Get(res::kAdmissionChecks.AtVersion(version), "", kFlexStartCheck);
  ASSERT_TRUE(ac.ok()) << ac.status().ToString();
  EXPECT_EQ((*ac)["spec"]["controllerName"], "kueue.x-k8s.io/provisioning-request");
  EXPECT_EQ((*ac)["spec"]["parameters"]["name"], kFlexStartConfig);
  EXPECT_EQ((*ac)["spec"]["parameters"]["kind"], "ProvisioningRequestConfig");
  EXPECT_EQ(Rules(*c.client, cq),
            json::array({{{"name", "human-check"}}, {{"name", kFlexStartCheck}, {"onFlavors", {kFlexFlavor}}}}))
      << version;
  // Again: nothing changes, nothing is written.
  auto again = flex.Sync(with);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->writes, 0) << version;

  // The last flex-start pool leaves git: our rule, check and config go; the person's stay.
  auto without = testing::Target({Pool("fixed", "v5p", "2x2x1", 1)});
  ASSERT_TRUE(quota.Sync(without).ok());
  report = flex.Sync(without);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->attached);
  EXPECT_EQ(Rules(*c.client, cq), json::array({{{"name", "human-check"}}})) << version;
  auto q = c.client->Get(cq, "", "tpu-queue");
  EXPECT_EQ((*q)["spec"]["preemption"]["withinClusterQueue"], "LowerPriority");
  EXPECT_TRUE(kube::IsNotFound(c.client->Get(res::kAdmissionChecks.AtVersion(version), "", kFlexStartCheck).status()));
  EXPECT_TRUE(kube::IsNotFound(
      c.client->Get(res::kProvisioningRequestConfigs.AtVersion(version), "", kFlexStartConfig).status()));
}

TEST(FlexStartSyncTest, FollowsGitBesideAPersonsCheckV1beta2) { ExpectFollowsGit("v1beta2"); }
TEST(FlexStartSyncTest, FollowsGitBesideAPersonsCheckV1beta1) { ExpectFollowsGit("v1beta1"); }

TEST(FlexStartSyncTest, AQueueListingAdmissionChecksIsReportedNotWritten) {
  kubesim::KubeApiServer::Options o;
  o.kueue_versions = {"v1beta1"};
  testing::Cluster c(o);
  QuotaSync quota(*c.client, QueueConfig());
  FlexStartSync flex(*c.client, quota);
  auto with = testing::Target({FlexPool("dws")});
  ASSERT_TRUE(quota.Sync(with).ok());
  const kube::ResourceRef cq = res::kClusterQueues.AtVersion("v1beta1");
  ASSERT_TRUE(c.client->MergePatch(cq, "", "tpu-queue", {{"spec", {{"admissionChecks", {"human-check"}}}}}).ok());
  auto report = flex.Sync(with);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->attached);
  EXPECT_NE(report->unattached_reason.find("spec.admissionChecks"), std::string::npos) << report->unattached_reason;
  EXPECT_EQ(Rules(*c.client, cq), json::array());
}

TEST(FlexStartSyncTest, CohortModeHasNoQueueToAttachTo) {
  testing::Cluster c;
  KueueConfig config;
  config.cohort = "all-tpus";
  QuotaSync quota(*c.client, config);
  FlexStartSync flex(*c.client, quota);
  auto with = testing::Target({FlexPool("dws")});
  ASSERT_TRUE(quota.Sync(with).ok());
  auto report = flex.Sync(with);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->attached);
  EXPECT_NE(report->unattached_reason.find("spec.kueue.cohort"), std::string::npos);
  EXPECT_TRUE(kube::IsNotFound(c.client->Get(res::kAdmissionChecks, "", kFlexStartCheck).status()));
}

TEST(FlexStartSyncTest, ASomeoneElsesCheckOfOurNameIsNeverDeleted) {
  testing::Cluster c;
  QuotaSync quota(*c.client, QueueConfig());
  FlexStartSync flex(*c.client, quota);
  json theirs = {{"apiVersion", res::kAdmissionChecks.ApiVersion()}, {"kind", "AdmissionCheck"},
                 {"metadata", {{"name", kFlexStartCheck}}}, {"spec", {{"controllerName", "example.com/other"}}}};
  ASSERT_TRUE(c.client->Create(res::kAdmissionChecks, "", theirs).ok());
  auto none = testing::Target({Pool("fixed", "v5p", "2x2x1", 1)});
  ASSERT_TRUE(quota.Sync(none).ok());
  ASSERT_TRUE(flex.Sync(none).ok());
  EXPECT_TRUE(c.client->Get(res::kAdmissionChecks, "", kFlexStartCheck).ok());
}

json Request(const std::string& name, const std::string& rr, const std::vector<std::pair<std::string, std::string>>& conds,
             const std::string& cls = kQueuedProvisioningClass) {
  json conditions = json::array();
  for (const auto& [type, status] : conds) conditions.push_back({{"type", type}, {"status", status}, {"reason", type}});
  return {{"metadata", {{"name", name}, {"namespace", "team"}}},
          {"spec", {{"provisioningClassName", cls}}},
          {"status", {{"conditions", conditions}, {"provisioningClassDetails", {{"ResizeRequestName", rr}}}}}};
}

json BookedNode(const std::string& pool, const std::string& rr) {
  return {{"metadata", {{"labels", {{"cloud.google.com/gke-nodepool", pool}, {kProvisioningRequestNodeLabel, rr}}}}}};
}

TEST(BookingsTest, LiveExpiredRevokedAndTheirPools) {
  auto report = ParseBookings(
      {Request("live", "rr-1", {{"Provisioned", "True"}}),
       Request("lost", "rr-9", {{"Provisioned", "True"}}),
       Request("old", "rr-2", {{"Provisioned", "True"}, {"BookingExpired", "True"}}),
       Request("gone", "rr-3", {{"Provisioned", "True"}, {"CapacityRevoked", "True"}}),
       Request("waiting", "", {{"Provisioned", "False"}}),
       Request("other", "rr-4", {{"Provisioned", "True"}}, "check-capacity.autoscaling.x-k8s.io")},
      {BookedNode("dws-0", "rr-1"), BookedNode("dws-1", "rr-2")});
  ASSERT_EQ(report.live.size(), 2u);
  EXPECT_EQ(report.live[0].name, "team/live");
  EXPECT_EQ(report.live[0].node_pools, std::vector<std::string>{"dws-0"});
  EXPECT_TRUE(report.live[1].node_pools.empty());
  ASSERT_EQ(report.expired.size(), 1u);
  EXPECT_EQ(report.expired[0].name, "team/old");
  ASSERT_EQ(report.revoked.size(), 1u);
  EXPECT_EQ(report.revoked[0].reason, "CapacityRevoked");

  std::string why;
  BookingReport one;
  one.live = {report.live[0]};
  EXPECT_EQ(PoolsHeldByBookings(one, {"dws-0", "dws-1"}, &why), std::vector<std::string>{"dws-0"});
  EXPECT_NE(why.find("team/live"), std::string::npos);
  // A live booking whose nodes are not found may be on any flex-start pool.
  EXPECT_EQ(PoolsHeldByBookings(report, {"dws-1"}, &why), std::vector<std::string>{"dws-1"});
}

// The gate: a live booking holds its flex-start pool's delete, with no
// timeout; once the booking expires the delete proceeds.
TEST(BookingsTest, ALiveBookingHoldsItsPoolsDelete) {
  testing::Cluster c;
  FakeEnv clock;
  KueueConfig config = QueueConfig();
  config.scale_down_timeout = std::chrono::seconds(1);
  QuotaSync quota(*c.client, config);
  kube::EventRecorder events(*c.client, clock);
  ScaleDownGate gate(*c.client, quota, events, clock);
  ASSERT_TRUE(c.client->Create({"", "v1", "namespaces", "Namespace", false}, "", {{"metadata", {{"name", "team"}}}}).ok());
  ASSERT_TRUE(quota.Sync(testing::Target({FlexPool("dws")})).ok());
  json node = BookedNode("dws-0", "rr-1");
  node["apiVersion"] = "v1";
  node["kind"] = "Node";
  node["metadata"]["name"] = "gke-dws-0-a";
  ASSERT_TRUE(c.client->Create(res::kNodes, "", node).ok());
  json pr = Request("job-a", "rr-1", {});
  pr["apiVersion"] = "autoscaling.x-k8s.io/v1";
  pr["kind"] = "ProvisioningRequest";
  json status = {{"status", pr["status"]}};
  status["status"]["conditions"] = json::array({{{"type", "Provisioned"}, {"status", "True"}, {"reason", "Provisioned"}}});
  pr.erase("status");
  ASSERT_TRUE(c.client->Create(res::kProvisioningRequests, "team", pr).ok());
  ASSERT_TRUE(c.client->MergePatch(res::kProvisioningRequests, "team", "job-a", status, "status").ok());

  PoolRemoval removal{"dws-0", "tpu-v5-lite-podslice", "2x4", true};
  auto empty = testing::Target({});
  auto v = gate.Check(empty, {removal});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->decision, ScaleDownDecision::kWait);
  EXPECT_NE(v->message.find("team/job-a"), std::string::npos) << v->message;
  clock.Advance(std::chrono::hours(2));
  EXPECT_EQ(gate.Check(empty, {removal})->decision, ScaleDownDecision::kWait) << "a booking has no timeout";

  status["status"]["conditions"].push_back({{"type", "BookingExpired"}, {"status", "True"}, {"reason", "BookingExpired"}});
  ASSERT_TRUE(c.client->MergePatch(res::kProvisioningRequests, "team", "job-a", status, "status").ok());
  EXPECT_EQ(gate.Check(empty, {removal})->decision, ScaleDownDecision::kProceed);
}

}  // namespace
}  // namespace tpu::kueue
