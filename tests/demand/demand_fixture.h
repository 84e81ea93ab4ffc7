// The integration fixture for demand-driven pools: the Kubernetes API
// emulator and the cloud emulator over loopback, a Controller watching the
// first, and passes that do what the daemon does — refresh (with operations),
// Controller::Plan, one Executor run, AfterApply. There is no kube-scheduler or
// kubelet in the Kubernetes emulator: the test plays them, creating the Nodes
// of a node pool only once the cloud reports it RUNNING and binding a pod only
// to such a Node whose labels match its nodeSelector (followers only onto
// their leader's pool, as JobSet's exclusive placement does).
#pragma once

#include <atomic>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "../kube/kube_test_util.h"
#include "apply/executor.h"
#include "base/fake_env.h"
#include "cloud/cloud.h"
#include "demand/controller.h"
#include "demand/names.h"
#include "http/curl_transport.h"
#include "kube/timestamps.h"
#include "sim/cloud_emulator.h"
#include "demand/demand_objects.h"

namespace tpu::demand::testing {

using nlohmann::json;

// Counts the cloud's 4xx answers (an overlapping operation is a 400).
class CountingTransport : public http::HttpTransport {
 public:
  Result<http::HttpResponse> Send(const http::HttpRequest& r) override {
    auto res = inner_.Send(r);
    if (res.ok() && res->status >= 400 && res->status < 500) ++client_errors;
    if (r.method == "POST" && r.url.size() > 10 && r.url.compare(r.url.size() - 10, 10, "/nodePools") == 0)
      ++pool_creates;
    return res;
  }
  std::atomic<int> client_errors{0};
  std::atomic<int> pool_creates{0};

 private:
  http::CurlTransport inner_;
};

inline const std::string kProject = "proj-demand";
inline const std::string kZone = "us-east5-b";
inline const std::string kClusterName = "c1";

class DemandFixture : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Starts a Controller (a fresh one each call: a restarted daemon).
  void StartController();
  // One reconcile pass; returns the executor's report and the decision.
  apply::ApplyReport Pass(Decision* decision = nullptr);
  // Polls `cond` until true or 20 s have passed.
  bool Eventually(const std::function<bool()>& cond);

  // JobSet `name` with `jobs` Jobs; each Job's pods (`vms` per slice) are created
  // Pending/Unschedulable, asking `tpu` chips of accelerator+topology.
  void CreateJobSet(const std::string& name, int jobs, const std::string& accelerator,
                    const std::string& topology, int tpu, int vms, const std::string& ns = "ml");
  void CreatePod(const std::string& ns, const std::string& jobset, int job, int index,
                 const std::string& accelerator, const std::string& topology, int tpu);
  void SetJobSetCondition(const std::string& ns, const std::string& name, const std::string& type);
  static std::string JobKey(const std::string& jobset, int job);

  // The test as kubelet + scheduler: Nodes for every RUNNING pool, then binds
  // pending pods. Returns how many pods it bound.
  int ScheduleAndRun();
  // The two halves: kubelets of RUNNING pools register Ready Nodes (and those
  // of pools gone leave); pending pods are bound, leaders first, one Job per pool.
  void RegisterNodes();
  int BindPending();
  std::map<std::string, cloud::NodePool> LivePools();  // this cluster's, by name
  std::vector<json> Events(const std::string& reason);
  std::string NodeOfPod(const std::string& ns, const std::string& name);

  // Applied to every pod CreatePod makes (extra selectors, labels, annotations).
  std::function<void(json& pod)> pod_edit_;
  // Every request the cloud emulator answered (its record file), as JSON lines.
  std::vector<json> Recorded(const std::string& method, const std::string& path_suffix);
  // Node pool create bodies the emulator received, by pool name.
  std::map<std::string, json> RecordedCreates();
  std::string record_file_;

  manifest::Target target_;
  FakeEnv clock_;  // its wall time starts at the real time: the Kubernetes emulator stamps objects with it
  std::unique_ptr<kube::testing::Cluster> kube_;
  std::unique_ptr<sim::CloudEmulator> cloud_emu_;
  CountingTransport* transport_ = nullptr;  // owned by cloud_
  std::unique_ptr<cloud::CloudConnection> cloud_;
  std::unique_ptr<Controller> controller_;
};

inline void DemandFixture::SetUp() {
  clock_.SetWall(std::chrono::system_clock::now());
  kube_ = std::make_unique<kube::testing::Cluster>();
  sim::CloudEmulatorOptions o;
  o.op_latency_ms = {{"default", 50}};
  record_file_ = ::testing::TempDir() + "demand_record_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl";
  std::remove(record_file_.c_str());
  o.record_file = record_file_;
  cloud_emu_ = std::make_unique<sim::CloudEmulator>(o);
  ASSERT_TRUE(cloud_emu_->Start().ok());
  ASSERT_TRUE(cloud_emu_->EnsureCluster(kProject, kZone, kClusterName).ok());
  auto transport = std::make_unique<CountingTransport>();
  transport_ = transport.get();
  cloud::EndpointOptions eo{cloud_emu_->endpoint() + "/", cloud_emu_->endpoint() + "/"};
  auto endpoints = cloud::ResolveEndpoints(eo, FakeEnv());
  ASSERT_TRUE(endpoints.ok()) << endpoints.status().ToString();
  cloud_ = std::make_unique<cloud::CloudConnection>(
      std::move(transport), std::make_unique<cloud::StaticTokenProvider>("t"), *endpoints);

  target_.project = kProject;
  target_.cluster = kClusterName;
  target_.dir = "deploy/" + kProject + "/" + kClusterName;
  manifest::DemandPolicy d;
  d.accelerators = {"tpu-v6e-slice"};
  d.topologies = {"2x4", "4x4"};
  d.capacity_types = {manifest::CapacityType::kOnDemand, manifest::CapacityType::kSpot};
  d.max_chips = 64;
  d.grace_period_seconds = 300;
  target_.policy.demand = d;
  StartController();
}

inline void DemandFixture::TearDown() {
  if (controller_) controller_->Stop();
  // Our connections first: the emulator's Stop() waits out idle keep-alive ones.
  cloud_.reset();
  cloud_emu_->Stop();
}

inline void DemandFixture::StartController() {
  if (controller_) controller_->Stop();
  ControllerOptions o;
  o.watch_timeout_seconds = 2;
  controller_ = std::make_unique<Controller>(*kube_->client, *kube_->client, clock_, o);
  controller_->Start();
  ASSERT_TRUE(Eventually([&] { return controller_->Synced(); }));
}

inline bool DemandFixture::Eventually(const std::function<bool()>& cond) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return cond();
}

inline apply::ApplyReport DemandFixture::Pass(Decision* decision) {
  cloud::RefreshOptions ro;
  ro.include_compute = true;
  ro.include_operations = true;
  auto live = cloud_->Refresh({kProject}, ro);
  EXPECT_TRUE(live.ok()) << live.status().ToString();
  if (!live.ok()) return {};
  Decision d = controller_->Plan(target_, *live);
  plan::Plan p;
  plan::TargetPlan tp;
  tp.key = DemandTargetKey({kProject, kZone, kClusterName, ""});
  tp.project = kProject;
  tp.cluster = kClusterName;
  tp.location = kZone;
  tp.actions = d.actions;
  p.targets.push_back(tp);
  apply::ExecuteOptions eo;
  eo.steps.poll.initial = std::chrono::milliseconds(20);
  eo.steps.poll.max = std::chrono::milliseconds(100);
  eo.running_operations = live->projects[kProject].running_operations;
  apply::Executor ex({&cloud_->gke(), &cloud_->compute(), &cloud_->poller()}, eo);
  apply::ApplyReport report = ex.Run(p);
  controller_->AfterApply(report);
  if (decision) *decision = std::move(d);
  return report;
}

inline std::string DemandFixture::JobKey(const std::string& jobset, int job) {
  return testing::JobKey(jobset, job);
}

inline void DemandFixture::CreatePod(const std::string& ns, const std::string& jobset, int job, int index,
                                     const std::string& accelerator, const std::string& topology, int tpu) {
  std::string name = PodName(jobset, job, index);
  const auto& pods = kube::resources::kPods;
  json pod = PodJson(ns, jobset, job, index, accelerator, topology, tpu);
  // JobSet labels its pods with its UID (as the JobSet controller does).
  if (auto js = kube_->client->Get(kube::resources::kJobSets, ns, jobset); js.ok())
    pod["metadata"]["labels"][kJobSetUidLabel] = (*js)["metadata"].value("uid", "");
  if (pod_edit_) pod_edit_(pod);
  name = pod["metadata"].value("name", name);
  ASSERT_TRUE(kube_->client->Create(pods, ns, pod).ok()) << name;
  ASSERT_TRUE(kube_->client->MergePatch(pods, ns, name, UnschedulableStatus(), "status").ok());
}

inline void DemandFixture::CreateJobSet(const std::string& name, int jobs, const std::string& accelerator,
                                        const std::string& topology, int tpu, int vms, const std::string& ns) {
  json js = JobSetJson(ns, name, jobs);
  const kube::ResourceRef namespaces{"", "v1", "namespaces", "Namespace", false};
  if (!kube_->client->Get(namespaces, "", ns).ok()) {
    ASSERT_TRUE(kube_->client->Create(namespaces, "", {{"apiVersion", "v1"}, {"kind", "Namespace"},
                                                       {"metadata", {{"name", ns}}}}).ok());
  }
  auto created = kube_->client->Create(kube::resources::kJobSets, ns, js);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  for (int j = 0; j < jobs; ++j)
    for (int i = 0; i < vms; ++i) CreatePod(ns, name, j, i, accelerator, topology, tpu);
}

inline void DemandFixture::SetJobSetCondition(const std::string& ns, const std::string& name,
                                              const std::string& type) {
  json status = {{"status", {{"conditions", {{{"type", type}, {"status", "True"},
                                              {"lastTransitionTime", kube::FormatTime(clock_.WallNow())}}}}}}};
  ASSERT_TRUE(kube_->client->MergePatch(kube::resources::kJobSets, ns, name, status, "status").ok());
}

inline std::map<std::string, cloud::NodePool> DemandFixture::LivePools() {
  std::map<std::string, cloud::NodePool> out;
  auto live = cloud_->Refresh({kProject});
  if (!live.ok()) return out;
  for (const auto& c : live->projects[kProject].clusters)
    for (const auto& p : c.node_pools) out[p.name] = p;
  return out;
}

inline int DemandFixture::ScheduleAndRun() {
  RegisterNodes();
  return BindPending();
}

inline void DemandFixture::RegisterNodes() {
  const auto& nodes = kube::resources::kNodes;
  // Kubelets register once the pool's VMs run; the Nodes of a pool that is
  // gone go with its VMs.
  auto live = LivePools();
  if (auto all = kube_->client->List(nodes, "", {}); all.ok())
    for (const auto& n : all->items) {
      std::string pool = n["metadata"]["labels"].value("cloud.google.com/gke-nodepool", "");
      if (!live.count(pool) || live[pool].status != "RUNNING") {
        EXPECT_TRUE(kube_->client->Delete(nodes, "", n["metadata"].value("name", "")).ok());
      }
    }
  for (const auto& [name, pool] : live) {
    if (pool.status != "RUNNING") continue;
    for (int i = 0; i < pool.node_count; ++i) {
      std::string node = "gke-" + name + "-" + std::to_string(i);
      json labels = {{"cloud.google.com/gke-nodepool", name}};
      for (const auto& [k, v] : pool.labels.value_or(cloud::StringMap{})) labels[k] = v;
      auto shape_chips = catalog::ChipsPerVm(pool.machine_type);
      if (pool.placement_policy && !pool.placement_policy->tpu_topology.empty())
        labels[kTopologySelector] = pool.placement_policy->tpu_topology;
      labels[kAcceleratorSelector] = catalog::GenerationOfMachineType(pool.machine_type)->accelerator;
      // The capacity labels GKE puts on the nodes it makes (pods select them).
      if (pool.spot) labels[kSpotSelector] = "true";
      if (pool.reservation_affinity && !pool.reservation_affinity->values.empty()) {
        std::string v = pool.reservation_affinity->values[0];
        labels[kReservationSelector] = v.substr(v.rfind('/') + 1);
        if (v.rfind("projects/", 0) == 0) labels[kReservationProjectSelector] = v.substr(9, v.find('/', 9) - 9);
      }
      // A Node of the same name from a pool deleted and made again is replaced.
      if (auto old = kube_->client->Get(nodes, "", node); old.ok()) {
        if ((*old)["metadata"].value("labels", json::object()) == labels) continue;
        EXPECT_TRUE(kube_->client->Delete(nodes, "", node).ok());
      }
      json n = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", node}, {"labels", labels}}}};
      EXPECT_TRUE(kube_->client->Create(nodes, "", n).ok());
      json st = {{"status", {{"allocatable", {{kTpuResource, std::to_string(shape_chips)}}},
                             {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
      EXPECT_TRUE(kube_->client->MergePatch(nodes, "", node, st, "status").ok());
    }
  }
}

inline int DemandFixture::BindPending() {
  const auto& nodes = kube::resources::kNodes;
  const auto& pods = kube::resources::kPods;
  auto node_list = kube_->client->List(nodes, "", {});
  auto pod_list = kube_->client->List(pods, "", {});
  if (!node_list.ok() || !pod_list.ok()) return 0;
  std::map<std::string, std::string> node_pool;  // node → pool
  std::map<std::string, int> used;               // node → pods on it
  std::map<std::string, std::string> job_pool;   // job key → pool its pods run on
  for (const auto& n : node_list->items)
    node_pool[n["metadata"]["name"]] = n["metadata"]["labels"].value("cloud.google.com/gke-nodepool", "");
  for (const auto& p : pod_list->items) {
    std::string node = p["spec"].value("nodeName", "");
    if (node.empty()) continue;
    ++used[node];
    job_pool[p["metadata"]["labels"].value(kJobKeyLabel, "")] = node_pool[node];
  }
  // Pool → JobSet job key already placed there (exclusive: one Job per pool).
  std::map<std::string, std::string> pool_job;
  for (const auto& [job, pool] : job_pool) pool_job[pool] = job;
  int bound = 0;
  // Leaders first (index 0), then followers onto their leader's pool.
  std::vector<json> pending;
  for (const auto& p : pod_list->items)
    if (p["spec"].value("nodeName", "").empty()) pending.push_back(p);
  std::stable_sort(pending.begin(), pending.end(), [](const json& a, const json& b) {
    return a["metadata"]["annotations"].value(kCompletionIndexAnnotation, "") <
           b["metadata"]["annotations"].value(kCompletionIndexAnnotation, "");
  });
  for (const auto& p : pending) {
    std::string job = p["metadata"]["labels"].value(kJobKeyLabel, "");
    for (const auto& n : node_list->items) {
      std::string name = n["metadata"]["name"];
      std::string pool = node_pool[name];
      if (used[name] > 0) continue;
      bool fits = true;
      const json selector = p["spec"].value("nodeSelector", json::object());
      for (auto it = selector.begin(); it != selector.end(); ++it)
        if (n["metadata"]["labels"].value(it.key(), "") != *it) fits = false;
      if (!fits) continue;
      if (job_pool.count(job) && job_pool[job] != pool) continue;  // follow the leader
      if (pool_job.count(pool) && pool_job[pool] != job) continue;  // exclusive
      std::string ns = p["metadata"]["namespace"], pod = p["metadata"]["name"];
      EXPECT_TRUE(kube_->client->MergePatch(pods, ns, pod, {{"spec", {{"nodeName", name}}}}).ok());
      EXPECT_TRUE(kube_->client->MergePatch(pods, ns, pod, {{"status", {{"phase", "Running"}, {"conditions", json::array()}}}}, "status").ok());
      ++used[name];
      job_pool[job] = pool;
      pool_job[pool] = job;
      ++bound;
      break;
    }
  }
  return bound;
}

inline std::vector<json> DemandFixture::Events(const std::string& reason) {
  std::vector<json> out;
  auto list = kube_->client->List(kube::resources::kEvents, "", {});
  if (!list.ok()) return out;
  for (const auto& e : list->items)
    if (e.value("reason", "") == reason) out.push_back(e);
  return out;
}

inline std::vector<json> DemandFixture::Recorded(const std::string& method, const std::string& path_suffix) {
  std::vector<json> out;
  std::ifstream in(record_file_);
  std::string line;
  while (std::getline(in, line)) {
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || j.value("method", "") != method) continue;
    std::string path = j.value("path", "");
    if (path.size() >= path_suffix.size() && path.compare(path.size() - path_suffix.size(), path_suffix.size(), path_suffix) == 0)
      out.push_back(j);
  }
  return out;
}

inline std::map<std::string, json> DemandFixture::RecordedCreates() {
  std::map<std::string, json> out;
  for (const auto& r : Recorded("POST", "/nodePools"))
    if (r.value("status", 0) == 200) out[r["request"]["nodePool"].value("name", "")] = r["request"]["nodePool"];
  return out;
}

inline std::string DemandFixture::NodeOfPod(const std::string& ns, const std::string& name) {
  auto p = kube_->client->Get(kube::resources::kPods, ns, name);
  return p.ok() ? (*p)["spec"].value("nodeName", "") : "";
}

}  // namespace tpu::demand::testing
