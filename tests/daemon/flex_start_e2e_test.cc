// End-to-end test of DWS flex-start beside Kueue: the real binary, a git
// repository, the cloud emulator and the Kubernetes API emulator. A
// flex-start pool in git brings our ProvisioningRequestConfig and
// AdmissionCheck, and our rule on the ClusterQueue beside a person's own
// check and fields; bookings (ProvisioningRequests) show in /status and
// metrics; removing the last flex-start pool takes our rule, check and config
// away, while the pool's delete waits for its live booking to end.
#include <gtest/gtest.h>

#include "daemon/kube_e2e_fixture.h"
#include "kube/resource.h"
#include "kube/status_errors.h"
#include "kueue/flex_start.h"

namespace tpu::daemon {
namespace {

using namespace testing;
namespace res = kube::resources;

constexpr const char* kQueue = "tpu-queue";
constexpr const char* kFlexFlavor = "tpu-v5-lite-podslice-1x1";
constexpr const char* kCheck = kueue::kFlexStartCheck;

std::string FlexPoolYaml(const std::string& name) {
  return "apiVersion: tpu-provisioner.io/v1alpha1\nkind: TPUNodePool\nmetadata:\n  name: " + name +
         "\nspec:\n  accelerator: v5e\n  topology: 1x1\n  location: us-central1-a\n  capacity:\n"
         "    type: flexStart\n  autoscaling:\n    enabled: true\n    minNodeCount: 0\n    maxNodeCount: 1\n";
}

class FlexStartE2eTest : public KubeE2eFixture {
 protected:
  json Rules() {
    auto cq = client_->Get(res::kClusterQueues, "", kQueue);
    if (!cq.ok() || !(*cq)["spec"].contains("admissionChecksStrategy")) return json::array();
    return (*cq)["spec"]["admissionChecksStrategy"].value("admissionChecks", json::array());
  }
  static json FlexStart(DaemonProcess& d) {
    json s = d.Status();
    return s.is_object() && s["kueue"].is_object() ? s["kueue"]["flexStart"] : json(nullptr);
  }
  // A queued-provisioning ProvisioningRequest in namespace team with `conditions`.
  void Book(const std::string& name, const std::string& resize_request, const json& conditions) {
    json pr = {{"apiVersion", "autoscaling.x-k8s.io/v1"}, {"kind", "ProvisioningRequest"},
               {"metadata", {{"name", name}, {"namespace", "team"}}},
               {"spec", {{"provisioningClassName", "queued-provisioning.gke.io"},
                         {"podSets", {{{"count", 1}, {"podTemplateRef", {{"name", "ppt-" + name}}}}}}}}};
    auto made = client_->Create(res::kProvisioningRequests, "team", pr);
    if (!made.ok()) {
      ASSERT_TRUE(kube::IsAlreadyExists(made.status())) << made.status().ToString();
    }
    auto r = client_->MergePatch(res::kProvisioningRequests, "team", name,
                                 {{"status", {{"conditions", conditions},
                                              {"provisioningClassDetails", {{"ResizeRequestName", resize_request}}}}}},
                                 "status");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
};

json Condition(const std::string& type) { return {{"type", type}, {"status", "True"}, {"reason", type}}; }

TEST_F(FlexStartE2eTest, CheckFollowsGitBesideAPersonsBookingsShowALiveBookingHoldsTheDelete) {
  // A person made the queue first: their own admission check and preemption.
  json cq = {{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "ClusterQueue"}, {"metadata", {{"name", kQueue}}},
             {"spec", {{"namespaceSelector", json::object()},
                       {"preemption", {{"withinClusterQueue", "LowerPriority"}}},
                       {"admissionChecksStrategy", {{"admissionChecks", {{{"name", "human-check"}}}}}}}}};
  ASSERT_TRUE(client_->Create(res::kClusterQueues, "", cq).ok());
  ASSERT_TRUE(client_->Create({"", "v1", "namespaces", "Namespace", false}, "", {{"metadata", {{"name", "team"}}}}).ok());
  WriteFile(repo_ / "deploy/tpu-proj/c1/cluster.yaml",
            ClusterYaml("c1") + "  kueue:\n    clusterQueue: tpu-queue\n    mode: ready\n");
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1) + "---\n" + FlexPoolYaml("dws"));
  CommitAll(repo_, "a slice and a flex-start pool");
  auto d = Start({"--kube-resync-interval", "300ms"});
  ASSERT_NE(d->Port(), 0) << d->Log();

  // Our config, our check, and our rule on the flex-start flavor beside the person's.
  const json both = json::array({{{"name", "human-check"}}, {{"name", kCheck}, {"onFlavors", {kFlexFlavor}}}});
  ASSERT_TRUE(WaitUntil([&] { return Rules() == both; })) << Rules().dump() << d->Log();
  auto prc = client_->Get(res::kProvisioningRequestConfigs, "", kueue::kFlexStartConfig);
  ASSERT_TRUE(prc.ok()) << prc.status().ToString();
  EXPECT_EQ((*prc)["spec"]["provisioningClassName"], "queued-provisioning.gke.io");
  EXPECT_EQ((*prc)["spec"]["managedResources"], json::array({"google.com/tpu"}));
  auto ac = client_->Get(res::kAdmissionChecks, "", kCheck);
  ASSERT_TRUE(ac.ok()) << ac.status().ToString();
  EXPECT_EQ((*ac)["spec"]["controllerName"], "kueue.x-k8s.io/provisioning-request");
  EXPECT_EQ((*ac)["spec"]["parameters"]["name"], kueue::kFlexStartConfig);
  ASSERT_TRUE(WaitUntil([&] {
    json f = FlexStart(*d);
    return f.is_object() && f["admissionCheck"] == kCheck;
  })) << d->Log();
  // Ready mode with no node up: the flex-start pool's chips are possible
  // capacity, quota all the same.
  json flavors = d->Status()["kueue"]["flavors"];
  bool counted = false;
  for (const auto& f : flavors)
    if (f["flavor"] == kFlexFlavor) counted = f["possibleChips"] == 1 && f["readyChips"] == 0 && f["nominalQuota"] == 1;
  EXPECT_TRUE(counted) << flavors.dump();
  ASSERT_TRUE(WaitUntil([&] { return cloud_.Pools("c1").count("dws-0") == 1; }));

  // A live booking on dws-0 (its node carries the resize request's label), and an expired one.
  json node = {{"apiVersion", "v1"}, {"kind", "Node"},
               {"metadata", {{"name", "gke-dws-0-a"},
                             {"labels", {{"cloud.google.com/gke-nodepool", "dws-0"},
                                         {kueue::kProvisioningRequestNodeLabel, "rr-live"}}}}}};
  ASSERT_TRUE(client_->Create(res::kNodes, "", node).ok());
  Book("job-live", "rr-live", {Condition("Accepted"), Condition("Provisioned")});
  Book("job-old", "rr-old", {Condition("Provisioned"), Condition("BookingExpired")});
  ASSERT_TRUE(WaitUntil([&] {
    json f = FlexStart(*d);
    return f.is_object() && f["expiredBookings"].size() == 1 && f["liveBookings"].size() == 1;
  })) << d->Log();
  json f = FlexStart(*d);
  EXPECT_EQ(f["expiredBookings"][0]["name"], "team/job-old");
  EXPECT_EQ(f["liveBookings"][0]["nodePools"], json::array({"dws-0"})) << f.dump();
  std::string metrics = d->Get("/metrics")->body;
  EXPECT_NE(metrics.find("tpu_provisioner_kueue_flex_start_bookings{state=\"expired\"} 1"), std::string::npos)
      << metrics;

  // The last flex-start pool leaves git: our rule, check and config go, the
  // person's check and fields stay; the pool's delete waits for the booking.
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  CommitAll(repo_, "no more flex-start");
  ASSERT_TRUE(WaitUntil([&] { return Rules() == json::array({{{"name", "human-check"}}}); }))
      << Rules().dump() << d->Log();
  ASSERT_TRUE(WaitUntil([&] {
    return kube::IsNotFound(client_->Get(res::kAdmissionChecks, "", kCheck).status()) &&
           kube::IsNotFound(client_->Get(res::kProvisioningRequestConfigs, "", kueue::kFlexStartConfig).status());
  })) << d->Log();
  auto after = client_->Get(res::kClusterQueues, "", kQueue);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ((*after)["spec"]["preemption"]["withinClusterQueue"], "LowerPriority");
  EXPECT_EQ((*after)["spec"]["namespaceSelector"], json::object());
  ASSERT_TRUE(WaitUntil([&] {
    json waits = d->Status()["kueue"]["scaleDownWaits"];
    return waits.size() == 1 && waits[0]["message"].get<std::string>().find("team/job-live") != std::string::npos;
  })) << d->Log();
  EXPECT_EQ(cloud_.Pools("c1").count("dws-0"), 1u) << "a live booking's pool is never deleted";

  // The booking ends: the delete proceeds.
  Book("job-live", "rr-live", {Condition("Accepted"), Condition("Provisioned"), Condition("BookingExpired")});
  ASSERT_TRUE(WaitUntil([&] { return cloud_.Pools("c1").count("dws-0") == 0; })) << d->Log();
  EXPECT_EQ(cloud_.Pools("c1").count("train-0"), 1u);
}

}  // namespace
}  // namespace tpu::daemon
