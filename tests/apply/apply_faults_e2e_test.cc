// End to end under injected faults: 429s, 503s and dropped connections on a
// large share of mutating calls, operation polls and list calls are retried (backoff with
// full jitter) until the apply converges, no call beyond the retry budget; a
// quota 403 on one pool fails that action with the API's message while every
// other pool, in its cluster and in others, is applied.
#include "apply_e2e_fixture.h"

namespace tpu::apply {
namespace {

using testing::Pool;

const std::string kPools = Pool("small", "2x2", 2) + "---\n" + Pool("one", "1x1", 1);

class ApplyFaultsE2ETest : public testing::ApplyE2EBase {
 protected:
  static constexpr int kClusters = 3;
  void Start(sim::FaultConfig faults) {
    StartEmulator(/*op_ms=*/40, std::move(faults));
    for (int c = 0; c < kClusters; ++c) {
      AddCluster("c" + std::to_string(c));
      Write("deploy/proj-apply/c" + std::to_string(c) + "/pools.yaml", kPools);
    }
  }
  std::map<std::string, std::string> AllRunning(const std::string& except = "") const {
    std::map<std::string, std::string> want;
    for (int c = 0; c < kClusters; ++c)
      for (const char* n : {"small-0", "small-1", "one-0"}) {
        std::string k = "c" + std::to_string(c) + "/" + n;
        if (k != except) want[k] = "RUNNING";
      }
    return want;
  }
  // Requests the emulator failed on purpose (recorded 429/503; dropped ones are not recorded).
  int InjectedFailures() const {
    int n = 0;
    for (const auto& x : Recorded()) {
      int status = x.value("status", 0);
      if (status == 429 || status == 503) ++n;
    }
    return n;
  }
};

sim::FaultRule Rule(const std::string& method, const std::string& path, double r429, double r503,
                    double drop) {
  sim::FaultRule r;
  r.method = method;
  r.path = path;
  r.rate_429 = r429;
  r.rate_503 = r503;
  r.rate_drop = drop;
  return r;
}

TEST_F(ApplyFaultsE2ETest, RetriesThrough429And503AndDroppedConnectionsConverge) {
  // 45% of creates, 35% of operation polls and 25% of the refresh's list calls fail.
  sim::FaultConfig faults;
  faults.seed = 424242;
  faults.rules = {Rule("POST", "/nodePools$", 0.2, 0.15, 0.1),
                  Rule("GET", "/operations/operation-", 0.15, 0.1, 0.1),
                  Rule("GET", "", 0.1, 0.1, 0.05)};
  Start(faults);
  std::string out;
  ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  EXPECT_NE(out.find("Apply complete: 9 applied, 0 failed, 0 waiting for capacity"), std::string::npos) << out;
  EXPECT_NE(out.find(" retries"), std::string::npos) << out;
  // The plan after reads through the same faults.
  EXPECT_EQ(Run("plan", "--detailed-exitcode", &out), 0) << out;
  ASSERT_TRUE(emu_->SetFaults({}).ok());  // this test's own reads below go through untouched
  EXPECT_EQ(LivePools(), AllRunning());
  EXPECT_GE(InjectedFailures(), 5) << "the faults must have been hit";
  // Each pool created once, whatever the retries (a create whose answer was
  // lost is found by its 409 and our markers, never made twice).
  std::map<std::string, int> once;
  for (const auto& [pool, status] : AllRunning()) once[pool] = 1;
  EXPECT_EQ(AcceptedPoolCreates(), once);
  // Within the budget: no pool's create was refused more than 12 times.
  std::map<std::string, int> refused;
  for (const auto& x : Recorded())
    if (x.value("method", "") == "POST" && x.value("path", "").ends_with("/nodePools") &&
        x.value("status", 0) != 200)
      ++refused[x["request"]["nodePool"].value("name", "") + "@" + x.value("path", "")];
  for (const auto& [pool, n] : refused) EXPECT_LE(n, 12) << pool;
}

// GKE's "Too many operations" (429) on a third of the creates, nothing else:
// the throttled creates wait and go again, and every pool is made exactly once.
TEST_F(ApplyFaultsE2ETest, TooManyOperationsOnAThirdOfTheCreatesConvergesWithNoDuplicate) {
  sim::FaultConfig faults;
  faults.seed = 20261124;
  faults.rules = {Rule("POST", "/nodePools$", 1.0 / 3, 0, 0)};
  Start(faults);
  std::string out;
  ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  EXPECT_NE(out.find("Apply complete: 9 applied, 0 failed, 0 waiting for capacity"), std::string::npos) << out;
  ASSERT_TRUE(emu_->SetFaults({}).ok());
  EXPECT_EQ(LivePools(), AllRunning());
  EXPECT_GE(InjectedFailures(), 1) << "the 429s must have been hit";
  std::map<std::string, int> once;
  for (const auto& [pool, status] : AllRunning()) once[pool] = 1;
  EXPECT_EQ(AcceptedPoolCreates(), once);
}

TEST_F(ApplyFaultsE2ETest, QuotaOnOnePoolFailsItAloneWithTheApiMessage) {
  sim::FaultConfig faults;
  sim::FaultRule quota;
  quota.method = "POST";
  quota.path = "/clusters/c1/nodePools$";
  quota.body = R"("name":"small-0")";
  quota.rate_quota = 1.0;
  faults.rules = {quota};
  Start(faults);
  std::string out;
  EXPECT_EQ(Run("apply", kApplyArgs, &out), 1) << out;
  EXPECT_NE(out.find("failed: create nodePool:proj-apply/us-east5/c1/small-0: "), std::string::npos) << out;
  EXPECT_NE(out.find("Insufficient regional quota to satisfy request"), std::string::npos) << out;
  EXPECT_NE(out.find("Apply complete: 8 applied, 1 failed"), std::string::npos) << out;
  // Every other pool, the two after it in the same cluster included.
  EXPECT_EQ(LivePools(), AllRunning("c1/small-0"));
  // Not retried: a quota error does not go away by itself.
  int tries = 0;
  for (const auto& x : Recorded())
    if (x.value("status", 0) == 403) ++tries;
  EXPECT_EQ(tries, 1);
  // Quota granted: the next apply creates just that pool.
  ASSERT_TRUE(emu_->SetFaults({}).ok());
  ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  EXPECT_NE(out.find("Apply complete: 1 applied, 0 failed"), std::string::npos) << out;
  EXPECT_EQ(LivePools(), AllRunning());
}

}  // namespace
}  // namespace tpu::apply
