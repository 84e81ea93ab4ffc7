// The fault matrix (docs/architecture.md, "Apply rules": retries): every fault the emulator can inject —
// 429, 500, 503, dropped connections, slow responses, failing operations,
// quota 403 — at 10 %, 20 % and 30 % of every API call (reads included), over
// all four capacity stages; plus stockouts and a call that always fails.
// Reconcile rounds run in this process (reconcile_rounds.h) until a round
// finds nothing to do. Checked:
//   - convergence: live == desired within a bounded number of rounds;
//   - retryable faults never fail an action; non-retryable ones (quota, an
//     operation's own error) fail only that action, with the API's message;
//   - no call is ever tried more than 1 + RetryBudget::max_retries times.
#include <cctype>

#include "reliability/capacity_stages.h"
#include "reliability/crash_harness.h"
#include "reliability/reconcile_rounds.h"

namespace tpu::reliability {
namespace {

// At 30 % of every call failing, a round's refresh (four list calls, not
// retried within the round) succeeds about one time in four; rounds are cheap.
constexpr int kMaxRounds = 80;
const int kMaxAttempts = 1 + apply::RetryBudget{}.max_retries;

struct FaultCase {
  std::string name;
  bool retryable;
  std::function<void(sim::FaultRule&, double)> set;
};

std::vector<FaultCase> FaultCases() {
  return {
      {"429", true, [](sim::FaultRule& r, double p) { r.rate_429 = p; }},
      {"500", true, [](sim::FaultRule& r, double p) { r.rate_500 = p; }},
      {"503", true, [](sim::FaultRule& r, double p) { r.rate_503 = p; }},
      {"drop", true, [](sim::FaultRule& r, double p) { r.rate_drop = p; }},
      {"slow", true, [](sim::FaultRule& r, double p) { r.rate_slow = p; r.slow_ms = 40; }},
      {"opFailure", false, [](sim::FaultRule& r, double p) { r.rate_op_failure = p; }},
      {"quota", false, [](sim::FaultRule& r, double p) { r.rate_quota = p; }},
  };
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class FaultMatrixTest : public ::testing::TestWithParam<std::string> {
 protected:
  void StartEmulator(const sim::FaultConfig& faults) {
    reconciler_.reset();
    sim::CloudEmulatorOptions o;
    o.op_latency_ms = {{"default", 10}};
    o.faults = faults;
    emu_ = std::make_unique<sim::CloudEmulator>(o);
    ASSERT_TRUE(emu_->Start().ok());
    ASSERT_TRUE(emu_->EnsureCluster(kProject, kGkeRegion, "gke").ok());
    repo_ = tmp_.path() / ("repo-" + std::to_string(++repos_));
    reconciler_ = std::make_unique<InProcessReconciler>(repo_, emu_->endpoint());
  }

  void WriteStage(const Stage& stage) {
    fs::remove_all(repo_ / "deploy");
    for (const auto& [path, text] : stage.files) source::testing::WriteFile(repo_ / path, text);
  }

  // Rounds until one finds nothing to do; every round's calls within budget.
  // Returns the rounds used (kMaxRounds + 1 when it never converged).
  int Converge(const std::string& context, const FaultCase* fault) {
    for (int round = 1; round <= kMaxRounds; ++round) {
      Round r = reconciler_->Run();
      for (const auto& [call, n] : r.attempts) {
        EXPECT_LE(n, kMaxAttempts) << context << ": " << call;
        max_attempts_ = std::max(max_attempts_, n);
      }
      retries_ += r.report.retries;
      for (const auto& t : r.report.tasks) {
        if (t.state != apply::TaskResult::State::kFailed) continue;
        ++failed_actions_;
        const std::string message = t.status.ToString();
        EXPECT_TRUE(fault && !fault->retryable) << context << ": a retryable fault failed " << t.description
                                                << ": " << message;
        if (fault && fault->name == "quota") {
          EXPECT_NE(Lower(message).find("quota"), std::string::npos) << context << ": " << message;
        }
        EXPECT_FALSE(message.empty()) << context;
      }
      if (r.refresh.ok() && !r.had_changes && r.report.tasks.empty()) return round;
    }
    return kMaxRounds + 1;
  }

  void ExpectLive(const Stage& stage, const std::string& context) {
    EXPECT_TRUE(WaitUntil([&] { return RunningOperations(*emu_) == 0; }));
    int templates = 0, policies = 0;
    std::map<std::string, int> named;
    for (const auto& [key, size] : Inventory(*emu_)) {
      if (key.rfind("template:", 0) == 0) ++templates;
      else if (key.rfind("policy:", 0) == 0) ++policies;
      else named[key] = size;
    }
    EXPECT_EQ(named, stage.pools) << context;
    EXPECT_EQ(templates, stage.templates) << context;
    EXPECT_EQ(policies, stage.policies) << context;
  }

  void TearDown() override { reconciler_.reset(); }

  TempDir tmp_;
  int repos_ = 0;
  fs::path repo_;
  test_support::MetadataServer metadata_;
  std::unique_ptr<sim::CloudEmulator> emu_;
  std::unique_ptr<InProcessReconciler> reconciler_;
  int max_attempts_ = 0, retries_ = 0, failed_actions_ = 0;
};

TEST_P(FaultMatrixTest, EveryStageConvergesWithinTheRetryBudget) {
  FaultCase fault;
  for (const auto& c : FaultCases())
    if (c.name == GetParam()) fault = c;
  ASSERT_FALSE(fault.name.empty());
  const bool resize = GkeResizeVisible(metadata_.host());
  int total_rounds = 0;
  for (double rate : {0.1, 0.2, 0.3}) {
    sim::FaultRule rule;
    fault.set(rule, rate);
    StartEmulator({static_cast<uint64_t>(rate * 100) + 7, {rule}});
    for (const Stage& stage : CapacityStages(resize)) {
      const std::string context = fault.name + " at " + std::to_string(int(rate * 100)) + "%, stage " + stage.name;
      WriteStage(stage);
      int rounds = Converge(context, &fault);
      ASSERT_LE(rounds, kMaxRounds) << context << ": did not converge";
      total_rounds += rounds;
      ExpectLive(stage, context);
    }
    // The client first: an emulator stopping under an idle keep-alive
    // connection waits for it.
    reconciler_.reset();
    emu_->Stop();
  }
  RecordProperty("rounds", total_rounds);
  RecordProperty("retries", retries_);
  RecordProperty("failed_actions", failed_actions_);
  RecordProperty("max_attempts_per_call", max_attempts_);
  std::printf("fault %s: %d rounds over 3 rates x 4 stages, %d retries, %d failed actions, at most %d attempts per call\n",
              fault.name.c_str(), total_rounds, retries_, failed_actions_, max_attempts_);
}

INSTANTIATE_TEST_SUITE_P(Faults, FaultMatrixTest,
                         ::testing::Values("429", "500", "503", "drop", "slow", "opFailure", "quota"),
                         [](const auto& info) { return info.param; });

class FaultEdgesTest : public FaultMatrixTest {};

// A call that always fails with a retryable error is tried exactly the budget
// and then fails its action with the API's message; the other actions go on.
TEST_F(FaultEdgesTest, AlwaysFailingCallStopsAtTheRetryBudget) {
  sim::FaultRule rule;
  rule.method = "POST";
  rule.path = "/nodePools$";
  rule.rate_500 = 1.0;
  StartEmulator({3, {rule}});
  WriteStage(CapacityStages(false)[0]);
  Round r = reconciler_->Run();
  ASSERT_TRUE(r.refresh.ok()) << r.refresh.ToString();
  int creates = 0;
  for (const auto& [call, n] : r.attempts) {
    if (call.find("/nodePools ") == std::string::npos || call.rfind("POST", 0) != 0) continue;
    ++creates;
    EXPECT_EQ(n, kMaxAttempts) << call;
  }
  EXPECT_EQ(creates, 4);  // a-0, a-1, b-0, s-0
  int failed = 0;
  for (const auto& t : r.report.tasks) {
    if (t.state != apply::TaskResult::State::kFailed) continue;
    ++failed;
    EXPECT_NE(t.status.ToString().find("500"), std::string::npos) << t.status.ToString();
  }
  EXPECT_EQ(failed, 4);
  EXPECT_EQ(r.report.ExitCode(), 1);
  // The TPUNodeGroup's Compute objects are not behind the failing route.
  EXPECT_EQ(Inventory(*emu_).count("mig:g"), 1u);
  RecordProperty("attempts_per_call", kMaxAttempts);
}

// A stockout: the ERROR pool is deleted, the action waits for capacity, and
// the next round after capacity returns converges.
TEST_F(FaultEdgesTest, StockoutWaitsForCapacityThenConverges) {
  StartEmulator({1, {}});
  // 9 chips in the zone: a (2 × 4) and s (1) fit, b (16) does not.
  emu_->SetZoneCapacity("us-east5-b", "tpu-v6e-slice", 9);
  const Stage stage = CapacityStages(false)[0];
  WriteStage(stage);
  Round first = reconciler_->Run();
  ASSERT_TRUE(first.refresh.ok());
  EXPECT_GE(first.report.waiting_for_capacity, 1);
  EXPECT_EQ(first.report.failed, 0);
  EXPECT_EQ(first.report.ExitCode(), 3);
  EXPECT_TRUE(WaitUntil([&] { return RunningOperations(*emu_) == 0; }));
  EXPECT_EQ(Inventory(*emu_).count("gke:gke/b-0"), 0u) << "the ERROR pool must be deleted";
  emu_->SetZoneCapacity("us-east5-b", "tpu-v6e-slice", 1000);
  EXPECT_LE(Converge("stockout", nullptr), 3);
  ExpectLive(stage, "stockout");
}

}  // namespace
}  // namespace tpu::reliability
