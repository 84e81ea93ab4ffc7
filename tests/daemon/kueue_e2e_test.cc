// End-to-end tests of `watch` beside Kueue (issue 7, "Must show"): the real
// binary, a real git repository, the cloud emulator and the Kubernetes API
// emulator in this process, the binary reaching the latter through a
// kubeconfig. Every wait polls /status, the emulators or the API with a
// deadline; nothing sleeps.
#include <filesystem>

#include <gtest/gtest.h>

#include "daemon/kube_e2e_fixture.h"
#include "kube/resource.h"
#include "kube/rest_client.h"
#include "sim/kube/api_server.h"

namespace tpu::daemon {
namespace {

using namespace testing;
namespace fs = std::filesystem;
namespace res = kube::resources;

constexpr const char* kFlavor = "tpu-v5-lite-podslice-2x2";  // PoolYaml's v5e 2x2: 4 chips a slice
constexpr const char* kQueue = "tpu-queue";
constexpr const char* kTarget = "tpu-proj/c1";

std::string KueueClusterYaml(const std::string& mode) {
  return ClusterYaml("c1") + "  kueue:\n    clusterQueue: tpu-queue\n    mode: " + mode + "\n";
}

class KueueE2eTest : public KubeE2eFixture {
 protected:
  // The queue's google.com/tpu nominalQuota for `flavor`; -1 when absent.
  int64_t Quota(const std::string& flavor = kFlavor) {
    auto cq = client_->Get(res::kClusterQueues, "", kQueue);
    if (!cq.ok()) return -1;
    for (const auto& g : (*cq)["spec"].value("resourceGroups", json::array()))
      for (const auto& f : g.value("flavors", json::array()))
        if (f.value("name", "") == flavor)
          for (const auto& r : f["resources"])
            if (r.value("name", "") == "google.com/tpu") return std::stoll(r.value("nominalQuota", "-1"));
    return -1;
  }

  void AddNode(const std::string& name, const std::string& pool, bool ready) {
    json node = {{"apiVersion", "v1"}, {"kind", "Node"},
                 {"metadata", {{"name", name}, {"labels", {{"cloud.google.com/gke-nodepool", pool},
                                                            {"cloud.google.com/gke-tpu-accelerator", "tpu-v5-lite-podslice"}}}}}};
    auto r = client_->Create(res::kNodes, "", node);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    // As kubelet does: the object first, its status through /status.
    r = client_->MergePatch(res::kNodes, "", name,
                            {{"status", {{"conditions", {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}}}}}},
                            "status");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }

  static json Kueue(DaemonProcess& d) {
    json s = d.Status();
    return s.is_object() ? s["kueue"] : json(nullptr);
  }
};

TEST_F(KueueE2eTest, FlavorsAndQuotaFromTheRepoACommitRaisesQuotaHumanFieldsSurvive) {
  WriteFile(repo_ / "deploy/tpu-proj/c1/cluster.yaml", KueueClusterYaml("declared"));
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  CommitAll(repo_, "one slice");
  auto d = Start({"--kube-resync-interval", "500ms"});
  ASSERT_NE(d->Port(), 0) << d->Log();

  ASSERT_TRUE(WaitUntil([&] { return Quota() == 4; })) << d->Log();
  auto rf = client_->Get(res::kResourceFlavors, "", kFlavor);
  ASSERT_TRUE(rf.ok()) << rf.status().ToString();
  EXPECT_EQ((*rf)["spec"]["nodeLabels"]["cloud.google.com/gke-tpu-accelerator"], "tpu-v5-lite-podslice");
  EXPECT_EQ((*rf)["spec"]["nodeLabels"]["cloud.google.com/gke-tpu-topology"], "2x2");
  EXPECT_EQ(cloud_.Pools("c1").count("train-0"), 1u);

  // A person edits the queue: preemption, and a CPU resource group beside ours.
  auto cq = client_->Get(res::kClusterQueues, "", kQueue);
  ASSERT_TRUE(cq.ok());
  json groups = (*cq)["spec"]["resourceGroups"];
  groups.push_back({{"coveredResources", {"cpu"}},
                    {"flavors", {{{"name", "default-cpu"}, {"resources", {{{"name", "cpu"}, {"nominalQuota", "96"}}}}}}}});
  auto edited = client_->MergePatch(res::kClusterQueues, "", kQueue,
                                    {{"spec", {{"resourceGroups", groups},
                                               {"preemption", {{"reclaimWithinCohort", "Any"}}}}}});
  ASSERT_TRUE(edited.ok()) << edited.status().ToString();

  // A commit adds a slice: quota rises, and the person's fields stay through
  // every sync (several resyncs pass while we wait for the new slice).
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  std::string head = CommitAll(repo_, "two slices");
  ASSERT_TRUE(WaitUntil([&] { return Quota() == 8; })) << d->Log();
  ASSERT_TRUE(WaitUntil([&] {
    json k = Kueue(*d);
    return k.is_object() && k["syncs"].get<int>() >= 4;
  }));
  cq = client_->Get(res::kClusterQueues, "", kQueue);
  ASSERT_TRUE(cq.ok());
  EXPECT_EQ((*cq)["spec"]["preemption"]["reclaimWithinCohort"], "Any");
  bool cpu_kept = false;
  for (const auto& g : (*cq)["spec"]["resourceGroups"])
    if (g["coveredResources"][0] == "cpu") cpu_kept = g["flavors"][0]["resources"][0]["nominalQuota"] == "96";
  EXPECT_TRUE(cpu_kept) << cq->dump();
  EXPECT_EQ(Quota(), 8);

  json k = Kueue(*d);
  EXPECT_EQ(k["target"], kTarget);
  EXPECT_EQ(k["mode"], "declared");
  ASSERT_EQ(k["flavors"].size(), 1u) << k.dump();
  EXPECT_EQ(k["flavors"][0]["declaredChips"], 8);
  EXPECT_EQ(k["flavors"][0]["nominalQuota"], 8);
  std::string metrics = d->Get("/metrics")->body;
  EXPECT_NE(metrics.find("tpu_provisioner_kueue_nominal_quota{flavor=\"tpu-v5-lite-podslice-2x2\"} 8"),
            std::string::npos) << metrics;
  EXPECT_NE(metrics.find("tpu_provisioner_kueue_declared_chips{flavor=\"tpu-v5-lite-podslice-2x2\"} 8"),
            std::string::npos);
}

TEST_F(KueueE2eTest, ReadyModeQuotaFollowsReadyNodesAndTheWatchRelistsAfterGone) {
  WriteFile(repo_ / "deploy/tpu-proj/c1/cluster.yaml", KueueClusterYaml("ready"));
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  CommitAll(repo_, "one slice");
  // A long resync: only the Node watch can make the daemon look again.
  auto d = Start({"--kube-resync-interval", "1h"});
  ASSERT_NE(d->Port(), 0) << d->Log();

  // The pool exists in the cloud but has no Ready node yet: no quota.
  ASSERT_TRUE(WaitUntil([&] { return Quota() == 0; })) << d->Log();
  AddNode("gke-train-0-a", "train-0", true);
  ASSERT_TRUE(WaitUntil([&] { return Quota() == 4; })) << d->Log();

  // A second slice is provisioning: declared 8, ready 4, quota stays 4.
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  CommitAll(repo_, "two slices");
  ASSERT_TRUE(WaitUntil([&] {
    json k = Kueue(*d);
    return k.is_object() && k["flavors"].size() == 1 && k["flavors"][0]["declaredChips"] == 8;
  })) << d->Log();
  EXPECT_EQ(cloud_.Pools("c1").count("train-1"), 1u);
  json k = Kueue(*d);
  EXPECT_EQ(k["flavors"][0]["readyChips"], 4);
  EXPECT_EQ(k["flavors"][0]["nominalQuota"], 4);
  EXPECT_EQ(Quota(), 4);
  // A node that is not Ready counts for nothing.
  AddNode("gke-train-1-a", "train-1", false);
  ASSERT_TRUE(WaitUntil([&] {
    std::string m = d->Get("/metrics")->body;
    return m.find("tpu_provisioner_kube_watch_lists_total{resource=\"nodes\"} 1") != std::string::npos;
  }));
  EXPECT_EQ(Quota(), 4);

  // The API server compacts its history while the watch is open: the watch
  // gets 410 Gone, lists again, and so sees the node that became Ready.
  ASSERT_TRUE(client_->Create(res::kConfigMaps, "default",
                              {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "bump"}}}})
                  .ok());
  api_.store().TEST_Compact();
  auto ready = client_->MergePatch(res::kNodes, "", "gke-train-1-a",
                                   {{"status", {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}}, "status");
  ASSERT_TRUE(ready.ok()) << ready.status().ToString();
  api_.SendBookmarks();
  ASSERT_TRUE(WaitUntil([&] {
    std::string m = d->Get("/metrics")->body;
    return m.find("tpu_provisioner_kube_watch_lists_total{resource=\"nodes\"} 2") != std::string::npos;
  })) << d->Get("/metrics")->body;
  ASSERT_TRUE(WaitUntil([&] { return Quota() == 8; })) << d->Log();
  // The queue is written a moment before the daemon records what it wrote.
  ASSERT_TRUE(WaitUntil([&] { return Kueue(*d)["flavors"][0]["readyChips"] == 8; })) << Kueue(*d).dump();
}

TEST_F(KueueE2eTest, ScaleDownWaitsForAnAdmittedWorkloadThenProceeds) {
  WriteFile(repo_ / "deploy/tpu-proj/c1/cluster.yaml", KueueClusterYaml("declared"));
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  CommitAll(repo_, "two slices");
  auto d = Start({"--kube-resync-interval", "300ms"});
  ASSERT_NE(d->Port(), 0) << d->Log();
  ASSERT_TRUE(WaitUntil([&] { return Quota() == 8; })) << d->Log();
  ASSERT_EQ(cloud_.Pools("c1").size(), 2u);

  // A workload admitted on all 8 chips of the flavor.
  json wl = {{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "Workload"},
             {"metadata", {{"name", "job-a"}, {"namespace", "default"}}},
             {"spec", {{"queueName", "user-queue"}, {"podSets", {{{"name", "main"}, {"count", 2}}}}}}};
  ASSERT_TRUE(client_->Create(res::kWorkloads, "default", wl).ok());
  json admission = {{"clusterQueue", kQueue},
                    {"podSetAssignments", {{{"name", "main"}, {"count", 2},
                                            {"flavors", {{"google.com/tpu", kFlavor}}},
                                            {"resourceUsage", {{"google.com/tpu", "8"}}}}}}};
  auto admitted = client_->MergePatch(res::kWorkloads, "default", "job-a",
                                      {{"status", {{"admission", admission},
                                                   {"conditions", {{{"type", "Admitted"}, {"status", "True"}}}}}}},
                                      "status");
  ASSERT_TRUE(admitted.ok()) << admitted.status().ToString();

  // One slice goes, and an unrelated 1-chip pool comes in the same commit.
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1) + "---\n" + PoolYaml("serve", 1, "1x1"));
  CommitAll(repo_, "shrink train, add serve");
  ASSERT_TRUE(WaitUntil([&] {
    json t = d->Target(kTarget);
    return t.is_object() && t["state"] == "waiting-for-workloads";
  })) << d->Log();
  // Quota was lowered first; the delete waits; the create went on.
  EXPECT_EQ(Quota(), 4);
  ASSERT_TRUE(WaitUntil([&] { return cloud_.Pools("c1").count("serve-0") == 1; }));
  EXPECT_EQ(cloud_.Pools("c1").count("train-1"), 1u);
  // The wait is published at the end of the pass that set the target's state.
  ASSERT_TRUE(WaitUntil([&] { return Kueue(*d)["scaleDownWaits"].size() == 1; })) << Kueue(*d).dump();
  json waits = Kueue(*d)["scaleDownWaits"];
  ASSERT_EQ(waits.size(), 1u) << waits.dump();
  EXPECT_EQ(waits[0]["pools"], json::array({"train-1"}));
  EXPECT_NE(waits[0]["message"].get<std::string>().find("8 chips admitted, quota 4"), std::string::npos)
      << waits.dump();
  auto events = client_->List(res::kEvents, "default", {});
  ASSERT_TRUE(events.ok());
  bool event = false;
  for (const auto& e : events->items)
    if (e.value("reason", "") == "ScaleDownWaiting" && e["involvedObject"].value("name", "") == kQueue) event = true;
  EXPECT_TRUE(event);
  EXPECT_NE(d->Get("/metrics")->body.find("tpu_provisioner_kueue_scale_down_waiting{target=\"tpu-proj/c1\"} 1"),
            std::string::npos);
  // Every resync re-asks the gate; the Workloads come from the watch, not a list.
  const int lists = api_.ListCalls("workloads");
  const int syncs = Kueue(*d)["syncs"].get<int>();
  ASSERT_TRUE(WaitUntil([&] { return Kueue(*d)["syncs"].get<int>() >= syncs + 3; }));
  EXPECT_EQ(api_.ListCalls("workloads"), lists);
  EXPECT_EQ(Kueue(*d)["scaleDownWaits"].size(), 1u);
  std::string metrics = d->Get("/metrics")->body;
  EXPECT_NE(metrics.find("tpu_provisioner_kube_watch_lists_total{resource=\"workloads\"} 1"), std::string::npos)
      << metrics;

  // The workload finishes: the delete proceeds.
  auto finished = client_->MergePatch(
      res::kWorkloads, "default", "job-a",
      {{"status", {{"conditions", {{{"type", "Admitted"}, {"status", "True"}}, {{"type", "Finished"}, {"status", "True"}}}}}}},
      "status");
  ASSERT_TRUE(finished.ok()) << finished.status().ToString();
  ASSERT_TRUE(WaitUntil([&] { return cloud_.Pools("c1").count("train-1") == 0; })) << d->Log();
  ASSERT_TRUE(WaitUntil([&] {
    json t = d->Target(kTarget);
    return t.is_object() && t["state"] == "in-sync" && Kueue(*d)["scaleDownWaits"].empty();
  })) << d->Log();
  EXPECT_EQ(Quota(), 4);
  EXPECT_EQ(Quota("tpu-v5-lite-podslice-1x1"), 1);
}

TEST_F(KueueE2eTest, OnlyTheLeaseHolderWritesAndAFollowerTakesOver) {
  WriteFile(repo_ / "deploy/tpu-proj/c1/cluster.yaml", KueueClusterYaml("declared"));
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  CommitAll(repo_, "one slice");
  // Someone else holds the lease for a long time.
  json lease = {{"apiVersion", "coordination.k8s.io/v1"}, {"kind", "Lease"},
                {"metadata", {{"name", "tpu-provisioner"}, {"namespace", "default"}}},
                {"spec", {{"holderIdentity", "elsewhere"}, {"leaseDurationSeconds", 3600},
                          {"renewTime", "2026-01-01T00:00:00.000000Z"}}}};
  ASSERT_TRUE(client_->Create(res::kLeases, "default", lease).ok());
  auto elect = [](const std::string& id) {
    return std::vector<std::string>{"--leader-elect", "--leader-elect-namespace", "default",
                                    "--leader-elect-identity", id, "--leader-elect-lease-duration", "3s",
                                    "--leader-elect-renew-deadline", "2s", "--leader-elect-retry-period", "200ms",
                                    "--kube-resync-interval", "300ms"};
  };
  auto a = Start(elect("replica-a"), "a.log");
  auto b = Start(elect("replica-b"), "b.log");
  ASSERT_NE(a->Port(), 0) << a->Log();
  ASSERT_NE(b->Port(), 0) << b->Log();

  // Followers are ready and idle: nothing written anywhere.
  for (auto* d : {a.get(), b.get()}) {
    ASSERT_TRUE(WaitUntil([&] {
      json s = d->Status();
      return s.is_object() && s["leaderElection"].is_object() && s["leaderElection"]["leader"] == false &&
             d->Get("/readyz")->status == 200;
    })) << d->Log();
    EXPECT_NE(d->Get("/metrics")->body.find("tpu_provisioner_reconciles_total{result=\"ok\"} 0"), std::string::npos);
  }
  EXPECT_FALSE(client_->Get(res::kClusterQueues, "", kQueue).ok());
  EXPECT_TRUE(cloud_.Pools("c1").empty());

  // The holder goes away: exactly one replica takes the lease and acts.
  ASSERT_TRUE(client_->Delete(res::kLeases, "default", "tpu-provisioner").ok());
  ASSERT_TRUE(WaitUntil([&] { return Quota() == 4 && cloud_.Pools("c1").count("train-0") == 1; }))
      << a->Log() << b->Log();
  auto holder = client_->Get(res::kLeases, "default", "tpu-provisioner");
  ASSERT_TRUE(holder.ok());
  const std::string leader_id = (*holder)["spec"]["holderIdentity"];
  DaemonProcess* leader = leader_id == "replica-a" ? a.get() : b.get();
  DaemonProcess* follower = leader == a.get() ? b.get() : a.get();
  EXPECT_EQ(leader->Status()["leaderElection"]["leader"], true);
  EXPECT_EQ(follower->Status()["leaderElection"]["leader"], false);
  EXPECT_NE(follower->Get("/metrics")->body.find("tpu_provisioner_reconciles_total{result=\"ok\"} 0"),
            std::string::npos);

  // The leader dies without releasing: the follower takes over once the
  // lease expires, and applies the next commit.
  leader->Signal(SIGKILL);
  ASSERT_TRUE(leader->WaitExit().has_value());
  ASSERT_TRUE(WaitUntil([&] {
    json s = follower->Status();
    return s.is_object() && s["leaderElection"]["leader"] == true;
  })) << follower->Log();
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  CommitAll(repo_, "two slices");
  ASSERT_TRUE(WaitUntil([&] { return Quota() == 8 && cloud_.Pools("c1").count("train-1") == 1; }))
      << follower->Log();

  // SIGTERM: a clean exit that gives the lease up at once.
  follower->Signal(SIGTERM);
  auto status = follower->WaitExit();
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << follower->Log();
  holder = client_->Get(res::kLeases, "default", "tpu-provisioner");
  ASSERT_TRUE(holder.ok());
  EXPECT_EQ((*holder)["spec"]["holderIdentity"], "") << holder->dump();
}

}  // namespace
}  // namespace tpu::daemon

namespace tpu::daemon {
namespace {

using namespace testing;
namespace res = kube::resources;

kubesim::KubeApiServer::Options Release(const std::string& release) {
  kubesim::KubeApiServer::Options o;
  o.kueue_release = release;
  return o;
}

std::string CohortClusterYaml() {
  return ClusterYaml("c1") + "  kueue:\n    cohort: all-tpus\n    mode: declared\n";
}

class KueueV011E2eTest : public KubeE2eFixture {
 protected:
  KueueV011E2eTest() : KubeE2eFixture(FastEmulatorOptions(), Release("v0.11")) {}
};

class KueueV013E2eTest : public KubeE2eFixture {
 protected:
  KueueV013E2eTest() : KubeE2eFixture(FastEmulatorOptions(), Release("v0.13")) {}
};

TEST_F(KueueV011E2eTest, CohortModeWhereCohortIsOnlyV1alpha1IsRefusedInTheLogAndStatus) {
  WriteFile(repo_ / "deploy/tpu-proj/c1/cluster.yaml", CohortClusterYaml());
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  CommitAll(repo_, "one slice, cohort mode");
  auto d = Start({"--kube-resync-interval", "300ms"});
  ASSERT_NE(d->Port(), 0) << d->Log();
  const std::string refusal =
      "Kueue cohorts is not served in v1beta2 or v1beta1; this cluster serves it only as kueue.x-k8s.io/v1alpha1. "
      "Cohort objects need Kueue v0.13 or later";
  ASSERT_TRUE(WaitUntil([&] {
    json s = d->Status();
    return s.is_object() && s["kueue"].is_object() &&
           s["kueue"]["lastError"].get<std::string>().find(refusal) != std::string::npos;
  })) << d->Status().dump(2);
  EXPECT_NE(d->Log().find(refusal), std::string::npos) << d->Log();
  // Reported once, not on every resync.
  ASSERT_TRUE(WaitUntil([&] { return d->Status()["kueue"]["syncs"].get<int>() >= 3; }));
  std::string log = d->Log();
  EXPECT_EQ(log.find(refusal), log.rfind(refusal)) << log;
  // Nothing of Kueue's was written, at any version; the cloud side went on.
  auto cohorts = client_->List(res::kCohorts.AtVersion("v1alpha1"), "", {});
  ASSERT_TRUE(cohorts.ok()) << cohorts.status().ToString();
  EXPECT_TRUE(cohorts->items.empty());
  auto flavors = client_->List(res::kResourceFlavors.AtVersion("v1beta1"), "", {});
  ASSERT_TRUE(flavors.ok());
  EXPECT_TRUE(flavors->items.empty());
  EXPECT_EQ(cloud_.Pools("c1").count("train-0"), 1u);
}

TEST_F(KueueV013E2eTest, CohortModeWritesTheCohortAsV1beta1) {
  WriteFile(repo_ / "deploy/tpu-proj/c1/cluster.yaml", CohortClusterYaml());
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  CommitAll(repo_, "two slices, cohort mode");
  auto d = Start({"--kube-resync-interval", "300ms"});
  ASSERT_NE(d->Port(), 0) << d->Log();
  ASSERT_TRUE(WaitUntil([&] { return client_->Get(res::kCohorts.AtVersion("v1beta1"), "", "all-tpus").ok(); }))
      << d->Status().dump(2);
  auto cohort = client_->Get(res::kCohorts.AtVersion("v1beta1"), "", "all-tpus");
  ASSERT_TRUE(cohort.ok());
  EXPECT_EQ((*cohort)["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ((*cohort)["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"], "8");
  // The cohort is visible a moment before the daemon has the server's answer.
  ASSERT_TRUE(WaitUntil([&] {
    json s = d->Status();
    return s.is_object() && s["kueue"].is_object() && s["kueue"]["syncs"].get<int>() >= 1;
  })) << d->Log();
  EXPECT_EQ(d->Status()["kueue"]["apiVersion"], "kueue.x-k8s.io/v1beta1") << d->Status()["kueue"].dump();
  EXPECT_EQ(d->Status()["kueue"]["lastError"], "");
}

TEST_F(KueueE2eTest, ResyncsOfAnUnchangedFleetMakeNoWrites) {
  WriteFile(repo_ / "deploy/tpu-proj/c1/cluster.yaml", KueueClusterYaml("declared"));
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1) + "");
  WriteFile(repo_ / "deploy/tpu-proj/c1/big.yaml", PoolYaml("big", 1, "2x4"));
  CommitAll(repo_, "two shapes");
  auto d = Start({"--kube-resync-interval", "200ms"});
  ASSERT_NE(d->Port(), 0) << d->Log();
  ASSERT_TRUE(WaitUntil([&] { return Quota() == 4 && Quota("tpu-v5-lite-podslice-2x4") == 8; })) << d->Log();
  ASSERT_TRUE(WaitUntil([&] {
    json k = Kueue(*d);
    return k.is_object() && k["syncs"].get<int>() >= 2 && k["writes"].get<int>() == 3;
  })) << d->Status().dump(2);
  const int writes = api_.store().WritesByManager()[kube::kFieldManager];
  const int syncs = Kueue(*d)["syncs"].get<int>();
  // Two more resyncs of the same fleet: not one write reaches the API server.
  ASSERT_TRUE(WaitUntil([&] { return Kueue(*d)["syncs"].get<int>() >= syncs + 2; }));
  EXPECT_EQ(api_.store().WritesByManager()[kube::kFieldManager], writes);
  json k = Kueue(*d);
  EXPECT_EQ(k["writes"], 3);
  EXPECT_GE(k["skippedWrites"].get<int>(), 6);  // 2 flavors + the queue, per resync
  std::string metrics = d->Get("/metrics")->body;
  EXPECT_NE(metrics.find("tpu_provisioner_kueue_writes_total{result=\"written\"} 3"), std::string::npos) << metrics;
}

}  // namespace
}  // namespace tpu::daemon
