// Refresh against the emulator: list calls only, ≤ 4 reads per project however
// many node pools, every Compute page followed (> 500 objects), projects in
// parallel, operations only when asked.
#include "cloud/refresh.h"

#include <atomic>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "base/fake_env.h"
#include "cloud/emulator_fixture.h"

namespace tpu::cloud {
namespace {

using nlohmann::json;

class RefreshTest : public testing::EmulatorTest {
 protected:
  // `pools` CPU node pools spread over `clusters` clusters of `project`, via /sim/seed.
  void SeedPools(const std::string& project, int clusters, int pools) {
    json seed = {{"clusters", json::array()}, {"nodePools", json::array()}};
    for (int c = 0; c < clusters; ++c) {
      seed["clusters"].push_back({{"project", project}, {"location", "us-east5"}, {"name", "c" + std::to_string(c)}});
    }
    for (int i = 0; i < pools; ++i) {
      seed["nodePools"].push_back({{"project", project}, {"location", "us-east5"},
                                   {"cluster", "c" + std::to_string(i % clusters)},
                                   {"nodePool", {{"name", "np-" + std::to_string(i)},
                                                 {"config", {{"machineType", "e2-standard-4"}}},
                                                 {"initialNodeCount", 1}}}});
    }
    Control("seed", seed);
  }
  // Through the API (there is no Compute seed), from a few threads at once.
  void SeedTemplates(const std::string& project, int n) {
    constexpr int kThreads = 8;
    std::atomic<int> failures{0};
    {
      std::vector<std::jthread> pool;
      for (int w = 0; w < kThreads; ++w) {
        pool.emplace_back([&, w] {
          for (int i = w; i < n; i += kThreads) {
            InstanceTemplate t;
            t.name = "tmpl-" + std::to_string(i);
            t.machine_type = "n2-standard-2";
            if (!cloud_->compute().InsertInstanceTemplate(project, t).ok()) ++failures;
          }
        });
      }
    }
    ASSERT_EQ(failures, 0);
  }
  size_t PoolCount(const ProjectState& s) {
    size_t n = 0;
    for (const auto& c : s.clusters) n += c.node_pools.size();
    return n;
  }
};

// Four list calls per project, never one per pool: the pools' sizes come from
// the aggregated list of the instance groups GKE runs for them, which pages
// at 500 like every Compute list (520 pools of regional clusters = 1,560 groups
// = 4 pages).
TEST_F(RefreshTest, PlanRefreshIsFourListsPerProjectWhateverThePoolCount) {
  SeedPools("big", 3, 520);
  SeedPools("small", 1, 2);
  cloud_->calls().Reset();
  emulator_->ResetCounters();
  auto live = cloud_->Refresh({"big", "small"});
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  EXPECT_EQ(PoolCount(live->projects.at("big")), 520u);
  EXPECT_EQ(live->projects.at("big").clusters.size(), 3u);
  EXPECT_EQ(PoolCount(live->projects.at("small")), 2u);
  EXPECT_EQ(cloud_->calls().reads(), 4 * 2 + 3);  // 4 × 2 projects + 3 more pages of groups
  EXPECT_EQ(cloud_->calls().mutations(), 0);
  auto counters = emulator_->counters();
  EXPECT_EQ(counters.calls, 11);
  EXPECT_EQ(counters.mutating_calls, 0);
  EXPECT_EQ(counters.calls_by_route["GET /v1/projects/{project}/locations/-/clusters"], 2);
  EXPECT_EQ(counters.calls_by_route["GET /compute/v1/projects/{project}/aggregated/instanceGroupManagers"], 5);  // 4 pages + 1
  // GKE's groups are read for sizes, not reported as ours.
  EXPECT_TRUE(live->projects.at("big").instance_group_managers.empty());
}

// GKE keeps initialNodeCount at its create value; the current size is the
// targetSize of the pool's instance groups, so a resize shows in the next refresh.
TEST_F(RefreshTest, PoolSizeIsItsInstanceGroupsTargetSize) {
  StartEmulator(/*op_latency_ms=*/0);
  ASSERT_TRUE(emulator_->EnsureCluster("sz", "us-east5", "c").ok());
  NodePool p;
  p.name = "cpu";
  p.machine_type = "e2-standard-4";
  p.node_count = 1;
  ASSERT_TRUE(cloud_->gke().CreateNodePool({"sz", "us-east5", "c"}, p).ok());
  auto before = cloud_->Refresh({"sz"});
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_EQ(before->projects.at("sz").clusters.at(0).node_pools.at(0).node_count, 1);
  ASSERT_TRUE(cloud_->gke().SetNodePoolSize({{"sz", "us-east5", "c"}, "cpu"}, 3).ok());
  cloud_->calls().Reset();
  auto after = cloud_->Refresh({"sz"});
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  const NodePool& live = after->projects.at("sz").clusters.at(0).node_pools.at(0);
  EXPECT_EQ(live.node_count, 3);
  EXPECT_EQ(live.instance_group_urls.size(), 3u) << "a regional pool: one group per zone";
  EXPECT_TRUE(after->projects.at("sz").instance_group_managers.empty());
  EXPECT_EQ(cloud_->calls().reads(), 4);
  // Without the Compute lists only initialNodeCount is known.
  RefreshOptions gke_only;
  gke_only.include_compute = false;
  auto plain = cloud_->Refresh({"sz"}, gke_only);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->projects.at("sz").clusters.at(0).node_pools.at(0).node_count, 1);
}

TEST_F(RefreshTest, ComputePagesAreAllFollowed) {
  SeedTemplates("pages", 501);
  cloud_->calls().Reset();
  auto live = cloud_->Refresh({"pages"});
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  const auto& s = live->projects.at("pages");
  ASSERT_EQ(s.instance_templates.size(), 501u);
  std::set<std::string> names;
  for (const auto& t : s.instance_templates) names.insert(t.name);
  EXPECT_EQ(names.size(), 501u);  // no page read twice, none skipped
  // clusters + policies + templates (2 pages of ≤ 500) + IGMs.
  EXPECT_EQ(cloud_->calls().reads(), 5);
}

TEST_F(RefreshTest, OperationsOnlyWhenAsked) {
  StartEmulator(/*op_latency_ms=*/600'000);
  ASSERT_TRUE(emulator_->EnsureCluster("ops", "us-east5", "c").ok());
  NodePool p;
  p.name = "pending";
  p.machine_type = "e2-standard-4";
  p.node_count = 1;
  auto op = cloud_->gke().CreateNodePool({"ops", "us-east5", "c"}, p);
  ASSERT_TRUE(op.ok()) << op.status().ToString();
  InstanceTemplate t;
  t.name = "t";
  t.machine_type = "n2-standard-2";
  ASSERT_TRUE(cloud_->compute().InsertInstanceTemplate("ops", t).ok());

  cloud_->calls().Reset();
  auto plain = cloud_->Refresh({"ops"});
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->projects.at("ops").running_operations.empty());
  EXPECT_EQ(cloud_->calls().reads(), 4);

  cloud_->calls().Reset();
  RefreshOptions with_ops;
  with_ops.include_operations = true;
  auto live = cloud_->Refresh({"ops"}, with_ops);
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  EXPECT_EQ(cloud_->calls().reads(), 6);
  const auto& running = live->projects.at("ops").running_operations;
  ASSERT_EQ(running.size(), 2u);
  int gke = 0, compute = 0;
  for (const auto& o : running) (o.api == Operation::Api::kGke ? gke : compute)++;
  EXPECT_EQ(gke, 1);
  EXPECT_EQ(compute, 1);
}

TEST_F(RefreshTest, WithoutComputeIsOneCallPerProject) {
  SeedPools("p1", 1, 3);
  cloud_->calls().Reset();
  RefreshOptions gke_only;
  gke_only.include_compute = false;
  auto live = cloud_->Refresh({"p1", "p2", "p3"}, gke_only);
  ASSERT_TRUE(live.ok());
  EXPECT_EQ(cloud_->calls().reads(), 3);
  EXPECT_EQ(live->projects.size(), 3u);
  EXPECT_TRUE(live->projects.at("p2").clusters.empty());
}

TEST_F(RefreshTest, ManyProjectsInParallelAllArrive) {
  std::vector<std::string> projects;
  for (int i = 0; i < 20; ++i) {
    projects.push_back("proj-" + std::to_string(i));
    SeedPools(projects.back(), 1, 1 + i % 3);
  }
  RefreshOptions options;
  options.parallelism = 4;
  cloud_->calls().Reset();
  auto live = cloud_->Refresh(projects, options);
  ASSERT_TRUE(live.ok());
  ASSERT_EQ(live->projects.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(PoolCount(live->projects.at(projects[i])), 1u + i % 3);
  EXPECT_EQ(cloud_->calls().reads(), 80);
}

TEST_F(RefreshTest, AFailingProjectFailsTheRefreshWithItsName) {
  sim::FaultConfig faults;
  sim::FaultRule rule;
  rule.path = "projects/bad/";
  rule.rate_500 = 1.0;
  faults.rules.push_back(rule);
  ASSERT_TRUE(emulator_->SetFaults(faults).ok());
  emulator_->ResetCounters();
  FakeEnv env;  // the backoff between attempts is slept on the fake clock
  RefreshOptions options;
  options.clock = &env;
  auto live = cloud_->Refresh({"good", "bad"}, options);
  ASSERT_FALSE(live.ok());
  EXPECT_EQ(live.status().code(), Status::Code::kUnavailable);
  EXPECT_EQ(live.status().message().rfind("refresh project bad: ", 0), 0u) << live.status().message();
  // Tried as often as RefreshOptions::read_attempts allows, then given up.
  EXPECT_EQ(emulator_->counters().calls_by_route["GET /v1/projects/{project}/locations/-/clusters"],
            1 + RefreshOptions{}.read_attempts);
  EXPECT_GT(env.slept(), std::chrono::milliseconds(0)) << "the retries waited their backoff";
}

// 429s, 503s and dropped connections on a third of all reads: every list is
// retried until it succeeds, and the refresh is complete.
TEST_F(RefreshTest, ListsAreRetriedThroughTransientErrors) {
  SeedPools("flaky", 2, 6);
  SeedTemplates("flaky", 3);
  sim::FaultConfig faults;
  faults.seed = 99;
  sim::FaultRule rule;
  rule.method = "GET";
  rule.rate_429 = 0.12;
  rule.rate_503 = 0.12;
  rule.rate_drop = 0.1;
  faults.rules.push_back(rule);
  ASSERT_TRUE(emulator_->SetFaults(faults).ok());
  cloud_->calls().Reset();
  RefreshOptions options;
  options.include_operations = true;
  options.read_attempts = 12;
  auto live = cloud_->Refresh({"flaky"}, options);
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  EXPECT_EQ(PoolCount(live->projects.at("flaky")), 6u);
  EXPECT_EQ(live->projects.at("flaky").instance_templates.size(), 3u);
  EXPECT_GT(cloud_->calls().reads(), 6) << "some reads failed and were made again";
}

}  // namespace
}  // namespace tpu::cloud

namespace tpu::cloud {
namespace {

// Reservations, when asked: one aggregated list per project, and the shared
// reservations a project's pools and templates name in another project read
// from their owner, once each, only when that owner is not refreshed too.
class RefreshReservationsTest : public testing::EmulatorTest {
 protected:
  void SetUp() override {
    StartEmulator(/*op_latency_ms=*/0);
    emulator_->SetCapacity(nlohmann::json::parse(R"({"reservations": [
      {"name": "pool-res", "project": "own", "zone": "us-east5-b", "machineType": "ct6e-standard-4t",
       "count": 4, "shared": ["use"]},
      {"name": "mig-res", "project": "own", "zone": "us-east5-b", "machineType": "ct6e-standard-4t",
       "count": 8, "shared": ["use"]},
      {"name": "local", "project": "use", "zone": "us-east5-b", "machineType": "ct6e-standard-4t",
       "count": 2}]})"));
    ASSERT_TRUE(emulator_->EnsureCluster("use", "us-east5-b", "c").ok());
    NodePool p;
    p.name = "slice";
    p.machine_type = "ct6e-standard-4t";
    p.placement_policy = PlacementPolicy{"COMPACT", "2x4", ""};
    p.node_count = 2;
    p.reservation_affinity = ReservationAffinity{"SPECIFIC_RESERVATION", "compute.googleapis.com/reservation-name",
                                                 {"projects/own/reservations/pool-res"}};
    auto op = cloud_->gke().CreateNodePool({"use", "us-east5-b", "c"}, p);
    ASSERT_TRUE(op.ok()) << op.status().ToString();
    EXPECT_FALSE(AwaitDone(*op).failed());
    InstanceTemplate t;
    t.name = "tmpl";
    t.machine_type = "ct6e-standard-4t";
    t.provisioning_model = "RESERVATION_BOUND";
    t.reservation = "projects/own/reservations/mig-res";
    ASSERT_TRUE(cloud_->compute().InsertInstanceTemplate("use", t).ok());
    InstanceGroupManager m;
    m.name = "mig";
    m.zone = "us-east5-b";
    m.instance_template = "global/instanceTemplates/tmpl";
    m.target_size = 3;
    auto mop = cloud_->compute().InsertInstanceGroupManager("use", m);
    ASSERT_TRUE(mop.ok()) << mop.status().ToString();
    AwaitDone(*mop);
  }
  static RefreshOptions WithReservations() {
    RefreshOptions o;
    o.include_reservations = true;
    return o;
  }
  static const Reservation* Find(const ProjectState& s, const std::string& project, const std::string& name) {
    for (const auto& r : s.reservations)
      if (r.project == project && r.name == name) return &r;
    return nullptr;
  }
};

TEST_F(RefreshReservationsTest, OwnListedAndSharedOnesReadFromTheirOwner) {
  cloud_->calls().Reset();
  auto live = cloud_->Refresh({"use"}, WithReservations());
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  const ProjectState& use = live->projects.at("use");
  ASSERT_EQ(use.reservations.size(), 3u);
  const Reservation* local = Find(use, "use", "local");
  ASSERT_NE(local, nullptr);
  EXPECT_EQ(local->count, 2);
  const Reservation* pool_res = Find(use, "own", "pool-res");
  ASSERT_NE(pool_res, nullptr) << "named by the pool";
  EXPECT_EQ(pool_res->count, 4);
  EXPECT_EQ(pool_res->in_use_count, 2) << "the 2x4 slice's two VMs";
  EXPECT_EQ(pool_res->shared_with, std::vector<std::string>{"use"});
  const Reservation* mig_res = Find(use, "own", "mig-res");
  ASSERT_NE(mig_res, nullptr) << "named by the MIG's template";
  EXPECT_EQ(mig_res->in_use_count, 3);
  EXPECT_EQ(mig_res->zone, "us-east5-b");
  // The 4 lists + the reservations list + one GET per shared reservation.
  EXPECT_EQ(cloud_->calls().reads(), 4 + 1 + 2);
  EXPECT_EQ(cloud_->calls().mutations(), 0);
}

TEST_F(RefreshReservationsTest, AnOwnerRefreshedTooCostsNoGet) {
  cloud_->calls().Reset();
  auto live = cloud_->Refresh({"use", "own"}, WithReservations());
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  EXPECT_EQ(cloud_->calls().reads(), 5 * 2) << "5 lists per project, the owner's list has them";
  EXPECT_EQ(live->projects.at("own").reservations.size(), 2u);
  ASSERT_NE(Find(live->projects.at("use"), "own", "pool-res"), nullptr);
  EXPECT_EQ(Find(live->projects.at("use"), "own", "mig-res")->in_use_count, 3);
}

TEST_F(RefreshReservationsTest, OnlyWhenAskedAndAHiddenOneIsLeftOut) {
  cloud_->calls().Reset();
  auto plain = cloud_->Refresh({"use"});
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->projects.at("use").reservations.empty());
  EXPECT_EQ(cloud_->calls().reads(), 4);
  RefreshOptions gke_only = WithReservations();
  gke_only.include_compute = false;  // no templates or MIGs: only the pool names one
  cloud_->calls().Reset();
  auto gke = cloud_->Refresh({"use"}, gke_only);
  ASSERT_TRUE(gke.ok());
  EXPECT_EQ(gke->projects.at("use").reservations.size(), 2u);
  EXPECT_EQ(cloud_->calls().reads(), 1 + 1 + 1);  // clusters, reservations, pool-res
  // The owner no longer serves pool-res (deleted, or not shown to us): left out.
  emulator_->SetCapacity(nlohmann::json::parse(R"({"reservations": [
      {"name": "pool-res", "project": "own", "zone": "us-east5-c", "machineType": "ct6e-standard-4t", "count": 4}]})"));
  auto hidden = cloud_->Refresh({"use"}, WithReservations());
  ASSERT_TRUE(hidden.ok()) << hidden.status().ToString();
  EXPECT_EQ(Find(hidden->projects.at("use"), "own", "pool-res"), nullptr);
  EXPECT_NE(Find(hidden->projects.at("use"), "own", "mig-res"), nullptr);
}

}  // namespace
}  // namespace tpu::cloud
