// Capacity (stockouts, reservations, spot reclaim), fault injection
// reproducible from its seed, counters and the /sim/ control endpoints.
#include "sim_test_util.h"

namespace tpu::sim::testing {
namespace {

using CapacityTest = EmulatorTest;
using FaultTest = EmulatorTest;
using ControlTest = EmulatorTest;

TEST_F(CapacityTest, StockoutEndsTheOperationWithAnErrorAndLeavesThePoolInError) {
  emu_->SetZoneCapacity("us-central1-a", "tpu-v6e-slice", 16);
  json ok = CreatePool(V6ePool("first", "4x4", 4));  // 16 chips: all of them
  EXPECT_FALSE(ok.contains("error"));
  auto r = http_->Post(Pools(), {{"nodePool", V6ePool("second", "4x4", 4)}});
  ASSERT_EQ(r.status, 200) << r.raw;  // accepted; the operation fails
  json op = WaitGke(r.body);
  ASSERT_TRUE(op.contains("error")) << op.dump();
  const std::string msg = op["error"]["message"];
  EXPECT_NE(msg.find("GCE_STOCKOUT"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ZONE_RESOURCE_POOL_EXHAUSTED"), std::string::npos) << msg;
  EXPECT_EQ(op["error"]["code"], 8);
  EXPECT_EQ(op["statusMessage"], msg);
  auto pool = http_->Get(Pools() + "/second").body;
  EXPECT_EQ(pool["status"], "ERROR");
  // Deleting the ERROR pool and freeing capacity lets a retry succeed.
  WaitGke(http_->Delete(Pools() + "/second").body);
  WaitGke(http_->Delete(Pools() + "/first").body);
  EXPECT_FALSE(CreatePool(V6ePool("second", "4x4", 4)).contains("error"));
}

TEST_F(CapacityTest, ReservationsHaveTheirOwnSize) {
  emu_->SetZoneCapacity("us-central1-a", "tpu-v6e-slice", 0);
  emu_->SetCapacity({{"reservations", {{{"name", "res1"}, {"zone", "us-central1-a"},
                                        {"accelerator", "tpu-v6e-slice"}, {"chips", 16}}}}});
  json pool = V6ePool("r1");
  pool["config"]["reservationAffinity"] = {{"consumeReservationType", "SPECIFIC_RESERVATION"},
                                           {"key", "compute.googleapis.com/reservation-name"},
                                           {"values", {"res1"}}};
  EXPECT_FALSE(CreatePool(pool).contains("error"));
  pool["name"] = "r2";
  EXPECT_TRUE(CreatePool(pool).contains("error"));
  EXPECT_TRUE(CreatePool(V6ePool("od")).contains("error"));  // the zone itself has none
  auto cap = http_->Get("/sim/capacity").body;
  EXPECT_EQ(cap["reservations"][0]["used"], 16);
}

TEST_F(CapacityTest, SpotCapacityCanBeReclaimed) {
  emu_->SetZoneCapacity("us-central1-a", "tpu-v6e-slice", 16);
  json pool = V6ePool("spot");
  pool["config"]["spot"] = true;
  CreatePool(pool);
  auto r = http_->Post("/sim/reclaim", {{"zone", "us-central1-a"}});
  ASSERT_EQ(r.status, 200) << r.raw;
  auto p = http_->Get(Pools() + "/spot").body;
  EXPECT_EQ(p["status"], "RUNNING_WITH_ERROR");
  EXPECT_EQ(http_->Get("/sim/capacity").body["zones"][0]["used"], 0);
  EXPECT_EQ(http_->Post("/sim/reclaim", {{"project", "p1"}, {"location", "us-central1-a"},
                                         {"cluster", "c1"}, {"nodePool", "nope"}}).status, 400);
}

// The sequence of statuses a fixed list of requests gets under `seed`.
std::vector<long> FaultSequence(CloudEmulator& emu, uint64_t seed) {
  FaultConfig f;
  f.seed = seed;
  FaultRule rule;
  rule.method = "GET";
  rule.path = "/nodePools";
  rule.rate_429 = 0.2;
  rule.rate_500 = 0.1;
  rule.rate_503 = 0.1;
  rule.rate_drop = 0.1;
  f.rules.push_back(rule);
  EXPECT_TRUE(emu.SetFaults(f).ok());
  Http http(emu.endpoint());
  std::vector<long> out;
  for (int i = 0; i < 40; ++i)
    out.push_back(http.Get("/v1/projects/p1/locations/us-central1-a/clusters/c1/nodePools").status);
  return out;
}

TEST_F(FaultTest, FaultsAreReproducibleFromTheSeed) {
  auto a = FaultSequence(*emu_, 42);
  auto b = FaultSequence(*emu_, 42);
  auto c = FaultSequence(*emu_, 7);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::set<long> kinds(a.begin(), a.end());
  EXPECT_TRUE(kinds.count(200));
  EXPECT_TRUE(kinds.count(429));
  EXPECT_TRUE(kinds.count(0)) << "a dropped connection shows as a failed transfer";
  // Paths that match no rule are untouched.
  for (int i = 0; i < 10; ++i) EXPECT_EQ(http_->Get("/v1/projects/p1/locations/-/clusters").status, 200);
}

TEST_F(FaultTest, QuotaSlowAndFailingOperations) {
  auto r = http_->Post("/sim/faults",
                       {{"seed", 1}, {"rules", {{{"method", "POST"}, {"path", "nodePools$"}, {"rateQuota", 1.0}},
                                                {{"method", "DELETE"}, {"rateOpFailure", 1.0}},
                                                {{"method", "GET"}, {"path", "/clusters/c1$"}, {"rateSlow", 1.0}, {"slowMs", 150}}}}});
  ASSERT_EQ(r.status, 200) << r.raw;
  auto quota = http_->Post(Pools(), {{"nodePool", V6ePool("q")}});
  EXPECT_EQ(quota.status, 403);
  EXPECT_EQ(quota.body["error"]["errors"][0]["reason"], "quotaExceeded");
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(http_->Get("/v1/projects/p1/locations/us-central1-a/clusters/c1").status, 200);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(150));

  ASSERT_EQ(http_->Post("/sim/faults", {{"seed", 1}, {"rules", {{{"method", "DELETE"}, {"rateOpFailure", 1.0}}}}}).status, 200);
  CreatePool(V6ePool("f"));
  json op = WaitGke(http_->Delete(Pools() + "/f").body);
  EXPECT_EQ(op["error"]["code"], 13);
  EXPECT_EQ(http_->Get(Pools() + "/f").body["status"], "ERROR");
}

TEST_F(ControlTest, CountersByRouteAndMutatingCallsPerTarget) {
  http_->Get("/v1/projects/p1/locations/-/clusters");
  http_->Get("/v1/projects/p1/locations/-/clusters");
  CreatePool(V6ePool("a"));
  http_->Post("/compute/v1/projects/p2/global/instanceTemplates",
              {{"name", "t"}, {"properties", {{"machineType", "n2-standard-8"}}}});
  CloudCounters c = emu_->counters();
  EXPECT_EQ(c.calls_by_route["GET /v1/projects/{project}/locations/-/clusters"], 2);
  EXPECT_EQ(c.calls_by_route["POST /v1/projects/{project}/locations/{location}/clusters/{cluster}/nodePools"], 1);
  EXPECT_EQ(c.mutating_calls, 2);
  EXPECT_EQ(c.mutations_by_cluster["p1/us-central1-a/c1"], 1);
  EXPECT_EQ(c.mutations_by_project["p2"], 1);
  auto over_http = http_->Get("/sim/counters").body;
  EXPECT_EQ(over_http["mutatingCalls"], 2);
  EXPECT_EQ(http_->Post("/sim/reset").status, 200);
  EXPECT_EQ(emu_->counters().calls, 0);
}

TEST_F(ControlTest, SeedStateAndReset) {
  auto r = http_->Post("/sim/seed",
                       {{"clusters", {{{"project", "p3"}, {"location", "us-east5-b"}, {"name", "c"}}}},
                        {"nodePools", {{{"project", "p3"}, {"location", "us-east5-b"}, {"cluster", "c"},
                                        {"nodePool", V6ePool("seeded")}}}}});
  ASSERT_EQ(r.status, 200) << r.raw;
  auto p = http_->Get("/v1/projects/p3/locations/us-east5-b/clusters/c/nodePools/seeded").body;
  EXPECT_EQ(p["status"], "RUNNING");
  EXPECT_EQ(p["config"]["diskType"], "pd-balanced");
  EXPECT_EQ(http_->Get("/sim/state").body["clusters"].size(), 2u);
  EXPECT_EQ(http_->Post("/sim/reset", {{"state", true}}).status, 200);
  EXPECT_EQ(http_->Get("/v1/projects/p3/locations/-/clusters").body, json::object());
  EXPECT_EQ(http_->Get("/sim/nothing").status, 404);
}

TEST(CloudEmulatorConfig, ParsesTheConfigFile) {
  auto c = CloudEmulatorConfigFromJson(json::parse(R"({
    "opLatencyMs": {"default": 5, "CREATE_NODE_POOL": 50},
    "requestLatencyMs": 50, "token": "t",
    "faults": {"seed": 3, "rules": [{"method": "GET", "rate429": 0.5}]},
    "capacity": {"zones": [{"zone": "us-central1-a", "accelerator": "tpu7x", "chips": 64}]},
    "clusters": [{"project": "p", "location": "us-central1-a", "name": "c"}]})"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->options.op_latency_ms["CREATE_NODE_POOL"], 50);
  EXPECT_EQ(c->options.request_latency_ms, 50);
  EXPECT_EQ(c->options.faults.rules[0].rate_429, 0.5);
  EXPECT_EQ(c->clusters.size(), 1u);
  EXPECT_FALSE(CloudEmulatorConfigFromJson(json::parse(R"({"tokens": 1})")).ok());
}

TEST(CloudEmulatorLatency, PerRequestLatencyIsAdded) {
  CloudEmulatorOptions o = FastOptions();
  o.request_latency_ms = 50;
  CloudEmulator emu(o);
  ASSERT_TRUE(emu.Start().ok());
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(Http(emu.endpoint()).Get("/v1/projects/p/locations/-/clusters").status, 200);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(50));
}

}  // namespace
}  // namespace tpu::sim::testing
