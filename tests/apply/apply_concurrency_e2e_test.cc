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

// A cluster-level operation someone else started (here the cluster's own
// create, with its default pool) excludes every other on the cluster: apply
// finds it in the operations list and waits it out, so no create meets the 400.
TEST_F(ApplyConcurrencyE2ETest, AClusterOperationSomeoneElseStartedIsWaitedOut) {
  StartEmulator(/*op_ms=*/800);
  httplib::Client api("127.0.0.1", emu_->port());
  auto created = api.Post("/v1/projects/proj-apply/locations/us-east5/clusters",
                          {{"Authorization", "Bearer t"}},
                          R"({"cluster":{"name":"c0","initialNodeCount":1}})", "application/json");
  ASSERT_TRUE(created && created->status == 200) << (created ? created->body : "no answer");
  const std::string op = nlohmann::json::parse(created->body)["name"];
  Write("deploy/proj-apply/c0/cluster.yaml", testing::ClusterYaml("c0"));
  Write("deploy/proj-apply/c0/pools.yaml", Pool("p", "2x2", 2));
  std::string out;
  ASSERT_EQ(Run("apply", kApplyArgs, &out), 0) << out;
  EXPECT_NE(out.find("1 earlier operations awaited"), std::string::npos) << out;
  EXPECT_EQ(Answers(400), 0) << "no create met the running cluster operation";
  auto rec = Recorded();
  size_t done = rec.size(), first_create = rec.size();
  for (size_t i = 0; i < rec.size(); ++i) {
    const auto& r = rec[i]["response"];
    if (done == rec.size() && r.is_object() && r.value("name", "") == op && r.value("status", "") == "DONE") done = i;
    if (first_create == rec.size() && rec[i].value("method", "") == "POST" &&
        rec[i].value("path", "").ends_with("/nodePools"))
      first_create = i;
  }
  EXPECT_LT(done, first_create) << "the pools were created only after the cluster operation ended";
  EXPECT_EQ(LivePools().count("c0/default-pool"), 1u) << "the cluster's own pool is not ours to touch";
}

}  // namespace
}  // namespace tpu::apply
