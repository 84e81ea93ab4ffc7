// Quota that follows capacity, against the Kubernetes API emulator: flavors
// and quota from targets, a slice more raises quota, `ready` mode follows
// Ready nodes, human-owned ClusterQueue fields survive every sync, and the
// v1beta1 fallback.
#include "kueue/quota_sync.h"

#include <gtest/gtest.h>

#include "kube/status_errors.h"
#include "kueue/kueue_test_util.h"

namespace tpu::kueue {
namespace {

namespace testing = kube::testing;

using testing::AddNode;
using testing::Pool;

KueueConfig Config(QuotaMode mode = QuotaMode::kDeclared) {
  KueueConfig c;
  c.cluster_queue = "tpu-queue";
  c.mode = mode;
  return c;
}

const kube::ResourceRef kCQ = kube::resources::kClusterQueues;
const kube::ResourceRef kRF = kube::resources::kResourceFlavors;

// The google.com/tpu nominalQuota of `flavor` in the queue, or -1.
int64_t QuotaOf(const json& queue, const std::string& flavor) {
  for (const auto& g : queue["spec"]["resourceGroups"]) {
    for (const auto& f : g["flavors"]) {
      if (f["name"] != flavor) continue;
      for (const auto& r : f["resources"]) {
        if (r["name"] == "google.com/tpu") return ParseQuantity(r["nominalQuota"]);
      }
    }
  }
  return -1;
}

TEST(ComputeQuotaTest, SlicesTimesChipsAndReadiness) {
  // v5e 4x4: four 4-chip hosts per slice (multi-host); v6e 2x4 on 8t: one host.
  auto multi = Pool("big", "v5e", "4x4", 2);
  auto single = Pool("small", "v6e", "2x4", 1, "ct6e-standard-8t");
  single.node_count = 3;  // a resizable single-host pool of three 8-chip nodes
  auto target = testing::Target({multi, single});
  std::map<std::string, int> ready = {{"big-0", 4}, {"big-1", 3}, {"small-0", 2}};
  KueueConfig c = Config(QuotaMode::kReady);
  auto flavors = ComputeQuota(target, ready, c);
  ASSERT_EQ(flavors.size(), 2u);
  EXPECT_EQ(flavors[0].flavor, "tpu-v5-lite-podslice-4x4");
  EXPECT_EQ(flavors[0].declared_chips, 32);
  EXPECT_EQ(flavors[0].ready_chips, 16);  // big-1 is missing a host: none of it counts
  EXPECT_EQ(flavors[0].nominal_quota, 16);
  EXPECT_EQ(flavors[1].flavor, "tpu-v6e-slice-2x4");
  EXPECT_EQ(flavors[1].declared_chips, 24);
  EXPECT_EQ(flavors[1].ready_chips, 16);
  c.mode = QuotaMode::kDeclared;
  EXPECT_EQ(ComputeQuota(target, ready, c)[0].nominal_quota, 32);
  EXPECT_EQ(ComputeQuota(target, ready, c, {"big-1"})[0].nominal_quota, 16);
  c.flavor_name = "{generation}-{topology}";
  EXPECT_EQ(FlavorName(c, "tpu-v5-lite-podslice", "2x4"), "v5e-2x4");
}

// A slice that scales from 0 is possible capacity: its chips are quota in
// both modes (a ready-mode queue that waited for its nodes would never admit
// the workload that makes the autoscaler bring them up), and the report says so.
TEST(ComputeQuotaTest, AnAutoscaledSliceIsPossibleCapacity) {
  auto zero = Pool("zero", "v5e", "4x4", 1);
  zero.autoscaling = manifest::Autoscaling{true, 0, 4};
  KueueConfig c = Config(QuotaMode::kReady);
  auto flavors = ComputeQuota(testing::Target({zero}), {}, c);
  ASSERT_EQ(flavors.size(), 1u);
  EXPECT_EQ(flavors[0].declared_chips, 16);
  EXPECT_EQ(flavors[0].possible_chips, 16);
  EXPECT_EQ(flavors[0].ready_chips, 0) << "possible capacity is never ready capacity";
  EXPECT_EQ(flavors[0].nominal_quota, 16) << "no node is up, yet the slice can be";
}

// A flex-start pool's chips are possible capacity, never ready, in both modes,
// even with its nodes up (a live booking): they leave when the booking ends.
TEST(ComputeQuotaTest, AFlexStartPoolIsPossibleNotReady) {
  auto flex = Pool("dws", "v5e", "2x4", 1, "ct5lp-hightpu-8t");
  flex.capacity.type = manifest::CapacityType::kFlexStart;
  flex.node_count = 2;
  flex.autoscaling = manifest::Autoscaling{true, 0, 2};
  auto fixed = Pool("fixed", "v5e", "2x4", 1, "ct5lp-hightpu-8t");
  for (auto mode : {QuotaMode::kDeclared, QuotaMode::kReady}) {
    auto flavors = ComputeQuota(testing::Target({flex, fixed}), {{"dws-0", 2}, {"fixed-0", 1}}, Config(mode));
    ASSERT_EQ(flavors.size(), 1u);
    EXPECT_EQ(flavors[0].declared_chips, 24);
    EXPECT_EQ(flavors[0].possible_chips, 16);
    EXPECT_EQ(flavors[0].ready_chips, 8) << "only the fixed pool's Ready node";
    EXPECT_EQ(flavors[0].nominal_quota, 24);
  }
}

TEST(QuotaSyncTest, FlavorsAndQuotaFromTargetsThenASliceMore) {
  testing::Cluster c;
  QuotaSync sync(*c.client, Config());
  auto target = testing::Target({Pool("train", "v5e", "4x4", 3), Pool("eval", "v5p", "2x2x2", 1)});
  auto report = sync.Sync(target);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->api_version, "kueue.x-k8s.io/v1beta2");
  EXPECT_TRUE(report->wrote_queue);

  auto rf = c.client->Get(kRF, "", "tpu-v5-lite-podslice-4x4");
  ASSERT_TRUE(rf.ok());
  EXPECT_EQ((*rf)["spec"]["nodeLabels"]["cloud.google.com/gke-tpu-accelerator"], "tpu-v5-lite-podslice");
  EXPECT_EQ((*rf)["spec"]["nodeLabels"]["cloud.google.com/gke-tpu-topology"], "4x4");
  EXPECT_EQ((*rf)["spec"]["tolerations"][0]["key"], "google.com/tpu");
  ASSERT_TRUE(c.client->Get(kRF, "", "tpu-v5p-slice-2x2x2").ok());

  auto cq = c.client->Get(kCQ, "", "tpu-queue");
  ASSERT_TRUE(cq.ok());
  EXPECT_EQ((*cq)["spec"]["namespaceSelector"], json::object());
  EXPECT_EQ((*cq)["spec"]["resourceGroups"][0]["coveredResources"], json::array({"google.com/tpu"}));
  EXPECT_EQ(QuotaOf(*cq, "tpu-v5-lite-podslice-4x4"), 48);
  EXPECT_EQ(QuotaOf(*cq, "tpu-v5p-slice-2x2x2"), 8);

  // A commit adds a slice.
  target.pools[0].slices = 4;
  ASSERT_TRUE(sync.Sync(target).ok());
  EXPECT_EQ(QuotaOf(*c.client->Get(kCQ, "", "tpu-queue"), "tpu-v5-lite-podslice-4x4"), 64);
  // Nothing changed: the queue is not written again.
  auto again = sync.Sync(target);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->wrote_queue);
  // The v5p pool goes away: its flavor leaves the queue.
  target.pools.pop_back();
  ASSERT_TRUE(sync.Sync(target).ok());
  EXPECT_EQ(QuotaOf(*c.client->Get(kCQ, "", "tpu-queue"), "tpu-v5p-slice-2x2x2"), -1);
}

TEST(QuotaSyncTest, ReadyModeLowersQuotaWhileAPoolProvisions) {
  testing::Cluster c;
  QuotaSync sync(*c.client, Config(QuotaMode::kReady));
  auto target = testing::Target({Pool("train", "v5e", "2x4", 2, "ct5lp-hightpu-4t")});  // 2 hosts a slice
  AddNode(*c.client, "n0", "train-0", true);
  AddNode(*c.client, "n1", "train-0", true);
  AddNode(*c.client, "n2", "train-1", true);
  AddNode(*c.client, "n3", "train-1", false);  // still provisioning
  auto report = sync.Sync(target);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->flavors[0].declared_chips, 16);
  EXPECT_EQ(report->flavors[0].ready_chips, 8);
  EXPECT_EQ(QuotaOf(*c.client->Get(kCQ, "", "tpu-queue"), "tpu-v5-lite-podslice-2x4"), 8);
  AddNode(*c.client, "n3", "train-1", true);
  ASSERT_TRUE(sync.Sync(target).ok());
  EXPECT_EQ(QuotaOf(*c.client->Get(kCQ, "", "tpu-queue"), "tpu-v5-lite-podslice-2x4"), 16);
}

TEST(QuotaSyncTest, HumanOwnedFieldsSurviveEverySync) {
  testing::Cluster c;
  // A person wrote the queue first, with kubectl apply.
  json human = json::parse(R"({
    "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
    "metadata": {"name": "tpu-queue", "labels": {"team": "ml"}},
    "spec": {
      "cohortName": "research",
      "namespaceSelector": {"matchLabels": {"tpu": "yes"}},
      "preemption": {"withinClusterQueue": "LowerPriority"},
      "resourceGroups": [
        {"coveredResources": ["cpu", "memory"],
         "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "96"},
                                                       {"name": "memory", "nominalQuota": "384Gi"}]}]},
        {"coveredResources": ["google.com/tpu"],
         "flavors": [{"name": "tpu-v5-lite-podslice-2x4",
                      "resources": [{"name": "google.com/tpu", "nominalQuota": "0", "borrowingLimit": "8"}]},
                     {"name": "legacy-v4", "resources": [{"name": "google.com/tpu", "nominalQuota": "16"}]}]}]}})");
  ASSERT_TRUE(c.client->Apply(kCQ, "", human, {"kubectl", false, ""}).ok());

  QuotaSync sync(*c.client, Config());
  auto target = testing::Target({Pool("train", "v5e", "2x4", 2, "ct5lp-hightpu-4t")});
  for (int slices : {2, 3, 1}) {
    target.pools[0].slices = slices;
    ASSERT_TRUE(sync.Sync(target).ok());
    auto cq = c.client->Get(kCQ, "", "tpu-queue");
    ASSERT_TRUE(cq.ok());
    const json& spec = (*cq)["spec"];
    EXPECT_EQ(QuotaOf(*cq, "tpu-v5-lite-podslice-2x4"), 8 * slices);
    EXPECT_EQ(spec["cohortName"], "research");
    EXPECT_EQ(spec["namespaceSelector"]["matchLabels"]["tpu"], "yes");
    EXPECT_EQ(spec["preemption"]["withinClusterQueue"], "LowerPriority");
    EXPECT_EQ((*cq)["metadata"]["labels"]["team"], "ml");
    EXPECT_EQ(spec["resourceGroups"][0], human["spec"]["resourceGroups"][0]);  // cpu untouched
    EXPECT_EQ(spec["resourceGroups"][1]["flavors"][0]["resources"][0]["borrowingLimit"], "8");
    EXPECT_EQ(QuotaOf(*cq, "legacy-v4"), 16);
    // Ownership as SSA records it: the person still owns what we never send.
    bool kubectl_owns_selector = false;
    for (const auto& m : (*cq)["metadata"]["managedFields"]) {
      if (m["manager"] == "kubectl" && m["fieldsV1"]["f:spec"].contains("f:namespaceSelector")) {
        kubectl_owns_selector = true;
      }
    }
    EXPECT_TRUE(kubectl_owns_selector);
  }
}

TEST(QuotaSyncTest, FallsBackToV1beta1) {
  testing::Cluster c(testing::KueueVersions({"v1beta1"}));
  QuotaSync sync(*c.client, Config());
  auto report = sync.Sync(testing::Target({Pool("train", "v6e", "4x4", 1)}));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->api_version, "kueue.x-k8s.io/v1beta1");
  auto cq = c.client->Get(kCQ.AtVersion("v1beta1"), "", "tpu-queue");
  ASSERT_TRUE(cq.ok());
  EXPECT_EQ(QuotaOf(*cq, "tpu-v6e-slice-4x4"), 16);

  testing::Cluster none(testing::KueueVersions({}));
  QuotaSync nothing(*none.client, Config());
  EXPECT_EQ(nothing.Sync(testing::Target({})).status().message(),
            "Kueue is not installed: kueue.x-k8s.io v1beta2 and v1beta1 are not served");
}

TEST(QuotaSyncTest, CohortMode) {
  testing::Cluster c;
  KueueConfig cfg;
  cfg.cohort = "all-tpus";
  QuotaSync sync(*c.client, cfg);
  ASSERT_TRUE(sync.Sync(testing::Target({Pool("train", "v5p", "2x2x4", 2)})).ok());
  auto cohort = c.client->Get(kube::resources::kCohorts, "", "all-tpus");
  ASSERT_TRUE(cohort.ok());
  EXPECT_EQ(QuotaOf(*cohort, "tpu-v5p-slice-2x2x4"), 32);
  EXPECT_FALSE((*cohort)["spec"].contains("namespaceSelector"));
}

kubesim::KubeApiServer::Options KueueRelease(const std::string& release) {
  kubesim::KubeApiServer::Options o;
  o.kueue_release = release;
  return o;
}

TEST(QuotaSyncTest, CohortServedOnlyAsV1alpha1IsRefusedNamingWhatIsServed) {
  testing::Cluster c(KueueRelease("v0.11"));
  KueueConfig cfg;
  cfg.cohort = "all-tpus";
  QuotaSync sync(*c.client, cfg);
  auto report = sync.Sync(testing::Target({Pool("train", "v5p", "2x2x4", 2)}));
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().message(),
            "Kueue cohorts is not served in v1beta2 or v1beta1; this cluster serves it only as "
            "kueue.x-k8s.io/v1alpha1. Cohort objects need Kueue v0.13 or later (Cohort v1beta1); upgrade Kueue, "
            "or put the quota in a ClusterQueue (spec.kueue.clusterQueue)");
  // Nothing was written: not the flavors either.
  auto flavors = c.client->List(kRF.AtVersion("v1beta1"), "", {});
  ASSERT_TRUE(flavors.ok());
  EXPECT_TRUE(flavors->items.empty());
  EXPECT_EQ(c.api.store().WritesByManager()[kube::kFieldManager], 0);

  // The same release with a ClusterQueue speaks v1beta1 for everything.
  QuotaSync queue(*c.client, Config());
  auto ok = queue.Sync(testing::Target({Pool("train", "v5p", "2x2x4", 2)}));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->api_version, "kueue.x-k8s.io/v1beta1");
}

TEST(QuotaSyncTest, CohortModeWritesV1beta1WhereCohortIsV1beta1) {
  for (const char* release : {"v0.13", "v0.14"}) {
    testing::Cluster c(KueueRelease(release));
    KueueConfig cfg;
    cfg.cohort = "all-tpus";
    QuotaSync sync(*c.client, cfg);
    auto report = sync.Sync(testing::Target({Pool("train", "v5p", "2x2x4", 2)}));
    ASSERT_TRUE(report.ok()) << release << ": " << report.status().ToString();
    EXPECT_EQ(report->api_version, "kueue.x-k8s.io/v1beta1");
    auto cohort = c.client->Get(kube::resources::kCohorts.AtVersion("v1beta1"), "", "all-tpus");
    ASSERT_TRUE(cohort.ok()) << release;
    EXPECT_EQ(QuotaOf(*cohort, "tpu-v5p-slice-2x2x4"), 32);
  }
  // Where both are served, v1beta2 is spoken for every kind.
  testing::Cluster both(KueueRelease("v0.15"));
  KueueConfig cfg;
  cfg.cohort = "all-tpus";
  QuotaSync sync(*both.client, cfg);
  auto report = sync.Sync(testing::Target({Pool("train", "v5p", "2x2x4", 2)}));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->api_version, "kueue.x-k8s.io/v1beta2");
}

TEST(QuotaSyncTest, AResyncOfAnUnchangedFleetWritesNothing) {
  testing::Cluster c;
  QuotaSync sync(*c.client, Config());
  auto target = testing::Target({Pool("train", "v6e", "4x4", 1), Pool("big", "v5p", "2x2x4", 1)});
  auto first = sync.Sync(target);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->writes, 3);  // two flavors and the queue
  const int writes = c.api.store().WritesByManager()[kube::kFieldManager];
  for (int i = 0; i < 2; ++i) {
    auto again = sync.Sync(target);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(again->writes, 0);
    EXPECT_EQ(again->skipped_writes, 3);
  }
  EXPECT_EQ(c.api.store().WritesByManager()[kube::kFieldManager], writes);

  // A person changes a field we own: the next sync takes it back (one write).
  auto edited = c.client->MergePatch(kRF, "", "tpu-v6e-slice-4x4",
                                     {{"spec", {{"nodeLabels", {{"cloud.google.com/gke-tpu-topology", "2x2"}}}}}});
  ASSERT_TRUE(edited.ok()) << edited.status().ToString();
  auto repaired = sync.Sync(target);
  ASSERT_TRUE(repaired.ok());
  EXPECT_EQ(repaired->writes, 1);
  auto rf = c.client->Get(kRF, "", "tpu-v6e-slice-4x4");
  ASSERT_TRUE(rf.ok());
  EXPECT_EQ((*rf)["spec"]["nodeLabels"]["cloud.google.com/gke-tpu-topology"], "4x4");
}

}  // namespace
}  // namespace tpu::kueue
