// End to end: the real `tpu-provisioner apply` schedules to GKE's rules on
// concurrent operations, as the emulator enforces them (docs/emulator.md,
// "Concurrency"): the pools of one cluster run together up to the cluster's
// quota (5), one operation per pool; with a smaller quota the 429s make it
// back off and lower its limit, and it still converges with one create per
// pool. The emulator measures the peak of operations running at once.
#include <cstdio>

#include "apply_e2e_fixture.h"

namespace tpu::apply {
namespace {

using testing::Pool;

class ApplyConcurrencyE2ETest : public testing::ApplyE2EBase {
 protected:
  static constexpr int kPools = 10;
  static constexpr const char* kCluster = "proj-apply/us-east5/c0";

  void Declare() {
    AddCluster("c0");
    std::string pools;
    for (int i = 0; i < kPools; ++i)
      pools += (i ? "---\n" : "") + Pool("p" + std::to_string(i), "2x2", 1);
    Write("deploy/proj-apply/c0/pools.yaml", pools);
  }
  std::map<std::string, int> OnceEach() const {
    std::map<std::string, int> want;
    for (int i = 0; i < kPools; ++i) want["c0/p" + std::to_string(i) + "-0"] = 1;
    return want;
  }
  int Answers(int status) const {
    int n = 0;
    for (const auto& x : Recorded()) n += x.value("status", 0) == status;
    return n;
  }
  int64_t Peak() const {
    auto peaks = emu_->counters().peak_operations_by_cluster;
    return peaks.count(kCluster) ? peaks.at(kCluster) : 0;
  }
};

TEST_F(ApplyConcurrencyE2ETest, TenPoolsOfOneClusterRunFiveAtOnce) {
  StartEmulator(/*op_ms=*/600);
  Declare();
  std::string out;
  ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  EXPECT_NE(out.find("Apply complete: 10 applied, 0 failed"), std::string::npos) << out;
  EXPECT_EQ(Peak(), 5) << "GKE's quota of concurrent operations per cluster";
  EXPECT_EQ(AcceptedPoolCreates(), OnceEach());
  EXPECT_EQ(Answers(429), 0) << "never past the quota";
  EXPECT_EQ(Answers(400), 0) << "never two operations on one pool";
  std::printf("[figures] quota 5: peak %lld operations at once, %d creates\n",
              static_cast<long long>(Peak()), static_cast<int>(AcceptedPoolCreates().size()));
}

TEST_F(ApplyConcurrencyE2ETest, AQuotaOfTwoIsMetWithBackoffAndNoDuplicateCreate) {
  StartEmulator(/*op_ms=*/300, {}, /*quota=*/2);
  Declare();
  std::string out;
  ASSERT_EQ(Run("apply", std::string(kApplyArgs) + " --retry-base-ms 50", &out), 0) << out;
  EXPECT_NE(out.find("Apply complete: 10 applied, 0 failed"), std::string::npos) << out;
  const int refused = Answers(429);
  EXPECT_GT(refused, 0) << "it starts at GKE's 5 and learns the smaller quota";
  EXPECT_NE(out.find("at a cluster's operations quota"), std::string::npos) << out;
  EXPECT_EQ(Peak(), 2);
  EXPECT_EQ(AcceptedPoolCreates(), OnceEach()) << "each pool created exactly once";
  EXPECT_EQ(Route(kCreateRoute), kPools + refused) << "every POST beyond the ten was a refused one";
  EXPECT_EQ(LivePools().size(), static_cast<size_t>(kPools));
  std::printf("[figures] quota 2: peak %lld, %d answered 429, %lld create calls, %d creates\n",
              static_cast<long long>(Peak()), refused, static_cast<long long>(Route(kCreateRoute)),
              static_cast<int>(AcceptedPoolCreates().size()));
  std::string plan;
  EXPECT_EQ(Run("plan", "--detailed-exitcode", &plan), 0) << plan;
}

}  // namespace
}  // namespace tpu::apply
