// Demand-driven pools end to end over loopback: the Kubernetes API emulator
// holds the JobSets, pods, Nodes and Events; the cloud emulator the node pools;
// the Controller watches the first and each pass runs its actions through the
// real Executor against the second (see demand_fixture.h for what the test
// plays: scheduler and kubelet). Asserts what exists afterwards, Events, and
// the cloud's POST and 4xx counts.
#include <gtest/gtest.h>

#include "demand_fixture.h"

namespace tpu::demand::testing {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

class DemandIntegrationTest : public DemandFixture {};

// A 2-slice JobSet of v6e 4x4 asking 4 chips per pod: two pools of four
// ct6e-standard-4t VMs with COMPACT 4x4 placement; nothing schedules before.
TEST_F(DemandIntegrationTest, TwoSliceJobSetGetsTwoPoolsAndFollowersScheduleOnlyAfter) {
  CreateJobSet("train", 2, "tpu-v6e-slice", "4x4", 4, 4);
  EXPECT_EQ(ScheduleAndRun(), 0) << "no Node exists before the pools";
  ASSERT_TRUE(Eventually([&] { Decision d; controller_->Plan(target_, *cloud_->Refresh({kProject})); return !controller_->Pools(target_.Key()).empty(); }));
  Decision d;
  apply::ApplyReport r = Pass(&d);
  EXPECT_EQ(r.applied, 2) << r.failed;
  auto pools = LivePools();
  ASSERT_EQ(pools.size(), 2u);
  for (int job = 0; job < 2; ++job) {
    const cloud::NodePool& p = pools.at(PoolName("train", JobKey("train", job)));
    EXPECT_EQ(p.status, "RUNNING");
    EXPECT_EQ(p.machine_type, "ct6e-standard-4t");
    EXPECT_EQ(p.node_count, 4);
    ASSERT_TRUE(p.placement_policy);
    EXPECT_EQ(p.placement_policy->type, "COMPACT");
    EXPECT_EQ(p.placement_policy->tpu_topology, "4x4");
    auto owner = WorkloadOwner(p);
    ASSERT_TRUE(owner);
    EXPECT_EQ(owner->Key(), "ml/train");
  }
  // The pools exist: all eight pods schedule, each Job's four onto one pool.
  EXPECT_EQ(ScheduleAndRun(), 8);
  for (int job = 0; job < 2; ++job) {
    std::set<std::string> pools_of_job;
    for (int i = 0; i < 4; ++i) {
      std::string node = NodeOfPod("ml", "train-slice-" + std::to_string(job) + "-" + std::to_string(i));
      ASSERT_FALSE(node.empty());
      pools_of_job.insert(node.substr(4, node.rfind('-') - 4));
    }
    EXPECT_EQ(pools_of_job.size(), 1u);
  }
  EXPECT_EQ(Events("TPUSliceRequested").size(), 2u);
  // Settled: the next pass does nothing; one POST per pool, no 4xx.
  r = Pass(&d);
  EXPECT_TRUE(d.actions.empty());
  EXPECT_EQ(transport_->pool_creates.load(), 2);
  EXPECT_EQ(transport_->client_errors.load(), 0);
}

// A JobSet restart (new pods, same Jobs and keys) keeps its pools; completion
// deletes both, only after the grace period.
TEST_F(DemandIntegrationTest, RestartKeepsPoolsCompletionDeletesThemAfterTheGracePeriod) {
  CreateJobSet("train", 2, "tpu-v6e-slice", "2x4", 4, 2);
  ASSERT_TRUE(Eventually([&] { Decision d; Pass(&d); return LivePools().size() == 2; }));
  EXPECT_EQ(ScheduleAndRun(), 4);

  // Restart: JobSet deletes and recreates its Jobs; the leaders wait again.
  json restarts = {{"status", {{"restarts", 1}}}};
  ASSERT_TRUE(kube_->client->MergePatch(kube::resources::kJobSets, "ml", "train", restarts, "status").ok());
  for (int job = 0; job < 2; ++job)
    for (int i = 0; i < 2; ++i)
      ASSERT_TRUE(kube_->client->Delete(kube::resources::kPods, "ml",
                                        "train-slice-" + std::to_string(job) + "-" + std::to_string(i)).ok());
  for (int job = 0; job < 2; ++job)
    for (int i = 0; i < 2; ++i) CreatePod("ml", "train", job, i, "tpu-v6e-slice", "2x4", 4);
  ASSERT_TRUE(Eventually([&] {
    Decision d;
    Pass(&d);
    return d.actions.empty() && d.pools.size() == 2;
  }));
  EXPECT_EQ(LivePools().size(), 2u);
  EXPECT_EQ(ScheduleAndRun(), 4) << "the restarted pods run on the kept pools";

  SetJobSetCondition("ml", "train", "Completed");
  Decision d;
  ASSERT_TRUE(Eventually([&] { Pass(&d); return d.next_due.has_value(); }));
  EXPECT_TRUE(d.actions.empty()) << "within the grace period";
  EXPECT_EQ(LivePools().size(), 2u);
  clock_.Advance(seconds(299));
  Pass(&d);
  EXPECT_EQ(LivePools().size(), 2u);
  clock_.Advance(seconds(2));
  apply::ApplyReport r = Pass(&d);
  EXPECT_EQ(d.actions.size(), 2u);
  EXPECT_EQ(r.applied, 2);
  EXPECT_TRUE(LivePools().empty());
  EXPECT_EQ(transport_->client_errors.load(), 0);
}

// A restart of the daemon while a create runs (the executor cancelled right
// after the POST, the Controller and its memory dropped): the next run finds
// the create through the pool list and the operations list, waits for it and
// creates nothing twice.
TEST_F(DemandIntegrationTest, RestartMidCreateMakesNoDuplicate) {
  CreateJobSet("train", 1, "tpu-v6e-slice", "4x4", 4, 4);
  cloud::RefreshOptions ro;
  ro.include_operations = true;
  Decision d;
  ASSERT_TRUE(Eventually([&] {
    d = controller_->Plan(target_, *cloud_->Refresh({kProject}, ro));
    return d.actions.size() == 1;
  }));
  // Start the create and stop the run as soon as the POST went out.
  plan::Plan p;
  plan::TargetPlan tp;
  tp.key = "k";
  tp.project = kProject;
  tp.cluster = kClusterName;
  tp.location = kZone;
  tp.actions = d.actions;
  p.targets.push_back(tp);
  apply::ExecuteOptions eo;
  eo.steps.poll.initial = std::chrono::milliseconds(200);
  apply::Executor ex({&cloud_->gke(), &cloud_->compute(), &cloud_->poller()}, eo);
  std::thread run([&] { ex.Run(p); });
  ASSERT_TRUE(Eventually([&] { return transport_->pool_creates.load() == 1; }));
  ex.Cancel();
  run.join();
  StartController();  // a new process: no memory of the create

  // Passes until the create's operation is over (its time, not a number of passes).
  ASSERT_TRUE(Eventually([&] {
    Pass(&d);
    auto live = LivePools();
    return live.size() == 1 && live.begin()->second.status == "RUNNING";
  }));
  auto pools = LivePools();
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(transport_->pool_creates.load(), 1) << "one POST, ever";
  EXPECT_EQ(transport_->client_errors.load(), 0);
}

// Beyond the policy: a Warning Event on the leader pod (and its JobSet) says why; no pool.
TEST_F(DemandIntegrationTest, RequestBeyondThePolicyGetsAnEventAndNoPool) {
  CreateJobSet("huge", 1, "tpu-v6e-slice", "8x8", 4, 16);  // topology not allowed
  CreateJobSet("many", 5, "tpu-v6e-slice", "4x4", 4, 1, "team-b");  // 5 × 16 > maxChips 64
  auto on_pods = [&] {
    std::vector<json> out;
    for (const auto& e : Events("TPUProvisioningRefused"))
      if (e["involvedObject"].value("kind", "") == "Pod") out.push_back(e);
    return out;
  };
  ASSERT_TRUE(Eventually([&] {
    Pass();
    return on_pods().size() == 2;
  }));
  EXPECT_EQ(Events("TPUProvisioningRefused").size(), 4u) << "and one on each JobSet";
  auto events = on_pods();
  std::map<std::string, std::string> why;
  for (const auto& e : events) why[e["involvedObject"]["name"]] = e["message"];
  EXPECT_NE(why["huge-slice-0-0"].find("topology 8x8 is not allowed"), std::string::npos) << why["huge-slice-0-0"];
  EXPECT_NE(why["many-slice-4-0"].find("over Cluster spec.demand.maxChips 64"), std::string::npos) << why["many-slice-4-0"];
  auto pools = LivePools();
  EXPECT_EQ(pools.size(), 4u) << "four of the five 16-chip slices fit in 64 chips";
  EXPECT_EQ(pools.count(PoolName("huge", JobKey("huge", 0))), 0u);
  // Refused again on the next pass: the Event's count goes up, no new Event.
  Pass();
  EXPECT_EQ(on_pods().size(), 2u);
  EXPECT_EQ(Events("TPUProvisioningRefused").size(), 4u);
}

// A stockout: the create fails, the ERROR pool is deleted, the leader keeps
// waiting; after the backoff and with capacity back, the pool is created.
// An ERROR pool found at start (a run killed after the stockout) is collected.
TEST_F(DemandIntegrationTest, ErrorPoolFromAStockoutIsCollectedAndRetried) {
  cloud_emu_->SetZoneCapacity(kZone, "tpu-v6e-slice", 0);
  CreateJobSet("train", 1, "tpu-v6e-slice", "4x4", 4, 4);
  apply::ApplyReport r;
  ASSERT_TRUE(Eventually([&] { r = Pass(); return r.waiting_for_capacity == 1; }));
  EXPECT_TRUE(LivePools().empty()) << "the stockout's ERROR pool is deleted";

  // An ERROR pool left behind (made here directly, as a killed run would).
  cloud::RefreshOptions ro;
  auto live = cloud_->Refresh({kProject}, ro);
  auto slice = BuildSlice(*target_.policy.demand, {kProject, kZone, kClusterName, "REGULAR"},
                          *ParseLeader(*kube_->client->Get(kube::resources::kPods, "ml", "train-slice-0-0")));
  ASSERT_TRUE(slice.ok());
  auto op = cloud_->gke().CreateNodePool({kProject, kZone, kClusterName}, slice->pool);
  ASSERT_TRUE(op.ok());
  ASSERT_TRUE(Eventually([&] { auto p = LivePools(); return p.size() == 1 && p.begin()->second.status == "ERROR"; }));
  Decision d;
  Pass(&d);
  ASSERT_EQ(d.actions.size(), 1u);
  EXPECT_EQ(d.actions[0].kind, plan::ActionKind::kDelete);
  EXPECT_TRUE(LivePools().empty());

  // Capacity is back; within the backoff nothing is tried, after it the create goes through.
  cloud_emu_->SetZoneCapacity(kZone, "tpu-v6e-slice", 100000);
  Pass(&d);
  EXPECT_TRUE(d.actions.empty()) << d.actions[0].reason;
  ASSERT_TRUE(d.next_due.has_value());
  clock_.Advance(seconds(31));
  r = Pass(&d);
  EXPECT_EQ(r.applied, 1);
  auto pools = LivePools();
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(pools.begin()->second.status, "RUNNING");
  EXPECT_EQ(ScheduleAndRun(), 4);
}

// A git-declared create and demand-driven creates for the same cluster in one
// executor run go together (GKE runs operations on different pools of a
// cluster at once), and never two on one pool: the emulator rejects a second
// operation on a busy pool with 400, and none comes. The control shows that a
// second operation on a busy pool does get that 400.
TEST_F(DemandIntegrationTest, GitAndDemandChangesOnOneClusterNeverOverlapOnAPool) {
  // Control: a create and, at once, a delete of the same pool, outside the executor.
  auto slice = [&](const std::string& name) {
    cloud::NodePool p;
    p.name = name;
    p.machine_type = "ct6e-standard-4t";
    p.node_count = 1;
    p.locations = {kZone};
    return p;
  };
  ASSERT_TRUE(cloud_->gke().CreateNodePool({kProject, kZone, kClusterName}, slice("control-a")).ok());
  auto second = cloud_->gke().DeleteNodePool({{kProject, kZone, kClusterName}, "control-a"});
  EXPECT_FALSE(second.ok());
  EXPECT_GE(transport_->client_errors.load(), 1) << "the emulator's one-operation-per-pool rule";
  ASSERT_TRUE(Eventually([&] { auto p = LivePools(); return p.count("control-a") && p["control-a"].status == "RUNNING"; }));
  int errors_before = transport_->client_errors.load();

  CreateJobSet("train", 2, "tpu-v6e-slice", "2x4", 4, 2);
  Decision d;
  cloud::RefreshOptions ro;
  ro.include_operations = true;
  ASSERT_TRUE(Eventually([&] {
    d = controller_->Plan(target_, *cloud_->Refresh({kProject}, ro));
    return d.actions.size() == 2;
  }));
  // The git side: a declared pool's create, planned as plan would.
  plan::Plan p;
  plan::TargetPlan git;
  git.key = target_.Key();
  git.project = kProject;
  git.cluster = kClusterName;
  git.location = kZone;
  plan::Action a;
  a.kind = plan::ActionKind::kCreate;
  a.resource = {plan::ResourceKind::kNodePool, kProject, kZone, kClusterName, "declared-0"};
  a.target = git.key;
  a.node_pool = slice("declared-0");
  git.actions = {a, a};
  git.actions[1].kind = plan::ActionKind::kDelete;
  git.actions[1].resource.name = "control-a";
  git.actions[1].node_pool.reset();
  git.actions.insert(git.actions.end(), d.actions.begin(), d.actions.end());  // as the daemon appends them
  p.targets.push_back(git);
  apply::ExecuteOptions eo;
  eo.steps.poll.initial = std::chrono::milliseconds(20);
  eo.steps.poll.max = std::chrono::milliseconds(100);
  apply::Executor ex({&cloud_->gke(), &cloud_->compute(), &cloud_->poller()}, eo);
  apply::ApplyReport r = ex.Run(p);
  EXPECT_EQ(r.applied, 4) << r.failed;
  EXPECT_EQ(transport_->client_errors.load(), errors_before) << "no overlapping operation";
  auto pools = LivePools();
  EXPECT_EQ(pools.count("declared-0"), 1u);
  EXPECT_EQ(pools.count("control-a"), 0u);
  EXPECT_EQ(pools.count(PoolName("train", JobKey("train", 0))), 1u);
  EXPECT_EQ(pools.count(PoolName("train", JobKey("train", 1))), 1u);
}

}  // namespace
}  // namespace tpu::demand::testing
