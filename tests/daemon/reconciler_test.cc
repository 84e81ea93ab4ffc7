// The reconcile loop against a real git repository and the cloud emulator:
// commits applied, broken targets blocked alone, reverts converging, dry runs
// mutating nothing, drift corrected at the drift check, force-pushes reported,
// one-file commits re-parsing one file, failures backing off per target.
// The clock is a FakeEnv: drift checks and retries happen when the test
// moves it, never by waiting.
#include "daemon/reconciler.h"

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "base/fake_env.h"
#include "daemon/daemon_fixture.h"
#include "source/git_sources.h"
#include "daemon/metrics_text.h"
#include "daemon/status_json.h"

namespace tpu::daemon {
namespace {

using namespace testing;
using namespace std::chrono_literals;

// Fails every refresh that lists a project in `broken`; forwards the rest.
class FlakyCloud : public CloudPort {
 public:
  explicit FlakyCloud(CloudPort* real) : real_(real) {}
  Result<cloud::LiveState> Refresh(const std::vector<std::string>& projects) override {
    for (const auto& p : projects)
      if (broken.count(p)) return Status::Unavailable("injected: project " + p + " unreachable");
    return real_->Refresh(projects);
  }
  apply::ApplyReport Apply(const plan::Plan& plan, std::vector<cloud::Operation> ops) override {
    return real_->Apply(plan, std::move(ops));
  }
  void CancelApply() override { real_->CancelApply(); }
  int OperationsInFlight() const override { return real_->OperationsInFlight(); }
  std::set<std::string> broken;

 private:
  CloudPort* real_;
};

class ReconcilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    InitRepo(dir());
    WriteFile(dir() / "deploy/tpu-proj/c1/cluster.yaml", ClusterYaml("c1"));
    WriteFile(dir() / "deploy/tpu-proj/c2/cluster.yaml", ClusterYaml("c2"));
    auto repo = source::GitRepo::Open(dir().string());
    ASSERT_TRUE(repo.ok()) << repo.status().ToString();
    source_ = std::make_unique<source::CheckoutSource>(repo.value());
    real_cloud_ = std::make_unique<ConnectionCloud>(&cloud_.connection(), FastExecuteOptions());
    flaky_ = std::make_unique<FlakyCloud>(real_cloud_.get());
  }

  std::unique_ptr<Reconciler> Make(ReconcilerOptions o = {}) {
    o.backoff.initial = 10s;
    return std::make_unique<Reconciler>(source_.get(), flaky_.get(), &clock_, o);
  }

  std::string Commit(const std::string& message) { return CommitAll(dir(), message); }

  static TargetReport Target(const Reconciler& r, const std::string& key) {
    for (const auto& t : r.Snapshot().targets)
      if (t.key == key) return t;
    ADD_FAILURE() << "no target " << key;
    return {};
  }

  // Waits (polling, with a deadline) until `pool` is gone from `cluster`.
  void WaitGone(const std::string& cluster, const std::string& pool) {
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (cloud_.Pools(cluster).count(pool)) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << pool << " still there";
      std::this_thread::sleep_for(5ms);
    }
  }

  const std::filesystem::path& dir() const { return tmp_.path(); }

  TempDir tmp_;
  CloudFixture cloud_;
  FakeEnv clock_;
  std::unique_ptr<source::CheckoutSource> source_;
  std::unique_ptr<ConnectionCloud> real_cloud_;
  std::unique_ptr<FlakyCloud> flaky_;
};

TEST_F(ReconcilerTest, AppliesACommitThenReplansOnlyTheChangedTarget) {
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  const std::string first = Commit("two slices");
  auto r = Make();

  CycleReport report = r->RunOnce();
  ASSERT_TRUE(report.error.ok()) << report.error.ToString();
  EXPECT_TRUE(report.ran);
  EXPECT_TRUE(report.full);
  EXPECT_EQ(report.applied, 2);
  EXPECT_EQ((cloud_.Pools("c1")), (std::map<std::string, int>{{"train-0", 1}, {"train-1", 1}}));
  TargetReport c1 = Target(*r, "tpu-proj/c1");
  EXPECT_EQ(c1.state, TargetState::kInSync) << StatusJson(r->Snapshot()).dump(2);
  EXPECT_EQ(c1.declared_chips, 8);
  EXPECT_EQ(c1.live_chips, 8);
  EXPECT_TRUE(r->Snapshot().ready);
  EXPECT_EQ(r->Snapshot().last_applied_revision, first);

  // Nothing new: nothing to do, no API call.
  cloud_.emulator().ResetCounters();
  EXPECT_FALSE(r->RunOnce().ran);
  EXPECT_EQ(cloud_.emulator().counters().calls, 0);

  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 3));
  const std::string second = Commit("three slices");
  report = r->RunOnce();
  EXPECT_FALSE(report.full);
  EXPECT_EQ(report.planned_targets, std::vector<std::string>{"tpu-proj/c1"});
  EXPECT_EQ(report.applied, 1);
  EXPECT_EQ(cloud_.Pools("c1").size(), 3u);
  EXPECT_EQ(r->Snapshot().last_applied_revision, second);
  EXPECT_EQ(Target(*r, "tpu-proj/c1").live_chips, 12);
}

TEST_F(ReconcilerTest, BrokenManifestBlocksOnlyItsTargetAndRevertConverges) {
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  WriteFile(dir() / "deploy/tpu-proj/c2/pools.yaml", PoolYaml("serve", 1));
  Commit("both");
  auto r = Make();
  ASSERT_TRUE(r->RunOnce().error.ok());

  // c2 gets a topology v5e does not have; c1 grows in the same commit.
  WriteFile(dir() / "deploy/tpu-proj/c2/pools.yaml", PoolYaml("serve", 2, "3x3"));
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 3));
  Commit("break c2, grow c1");
  CycleReport report = r->RunOnce();
  EXPECT_EQ(report.blocked, 1);
  EXPECT_EQ(cloud_.Pools("c1").size(), 3u);
  EXPECT_EQ((cloud_.Pools("c2")), (std::map<std::string, int>{{"serve-0", 1}}));  // untouched
  TargetReport c2 = Target(*r, "tpu-proj/c2");
  EXPECT_EQ(c2.state, TargetState::kBlocked);
  ASSERT_FALSE(c2.errors.empty());
  EXPECT_NE(c2.errors[0].find("deploy/tpu-proj/c2/pools.yaml:"), std::string::npos) << c2.errors[0];
  EXPECT_NE(c2.errors[0].find("topology"), std::string::npos) << c2.errors[0];
  EXPECT_EQ(Target(*r, "tpu-proj/c1").state, TargetState::kInSync);
  // /status says why.
  std::string status = StatusJson(r->Snapshot()).dump();
  EXPECT_NE(status.find("\"blocked\""), std::string::npos);
  EXPECT_NE(status.find("deploy/tpu-proj/c2/pools.yaml"), std::string::npos);

  Git(dir(), "revert --no-edit HEAD");
  report = r->RunOnce();
  EXPECT_EQ(report.blocked, 0);
  EXPECT_EQ(Target(*r, "tpu-proj/c2").state, TargetState::kInSync);
  EXPECT_TRUE(Target(*r, "tpu-proj/c2").errors.empty());
  EXPECT_EQ(cloud_.Pools("c1").size(), 2u);  // reverted: back to two slices
  EXPECT_EQ(cloud_.Pools("c2").size(), 1u);
}

TEST_F(ReconcilerTest, DryRunPlansAndNeverMutates) {
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  Commit("two slices");
  ReconcilerOptions o;
  o.dry_run = true;
  auto r = Make(o);
  CycleReport report = r->RunOnce();
  EXPECT_EQ(report.actions["create"], 2);
  EXPECT_EQ(report.applied, 0);
  EXPECT_EQ(cloud_.emulator().counters().mutating_calls, 0);
  EXPECT_EQ(Target(*r, "tpu-proj/c1").state, TargetState::kPending);
  EXPECT_EQ(Target(*r, "tpu-proj/c1").last_plan.create, 2);
}

TEST_F(ReconcilerTest, MassDeleteIsRefusedAndReported) {
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 4));
  Commit("four slices");
  auto r = Make();
  ASSERT_EQ(r->RunOnce().applied, 4);
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  Commit("shrink to one: deletes 75% of the chips");
  CycleReport report = r->RunOnce();
  EXPECT_EQ(report.applied, 0);
  EXPECT_EQ(cloud_.Pools("c1").size(), 4u);
  TargetReport c1 = Target(*r, "tpu-proj/c1");
  EXPECT_EQ(c1.state, TargetState::kRefused);
  ASSERT_FALSE(c1.errors.empty());
  EXPECT_EQ(c1.last_plan.remove, 3);
}

TEST_F(ReconcilerTest, DriftIsCorrectedAtTheNextDriftCheck) {
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  Commit("two slices");
  ReconcilerOptions o;
  o.drift_interval = 1min;
  auto r = Make(o);
  ASSERT_EQ(r->RunOnce().applied, 2);

  // Behind our back: one pool deleted, directly through the API.
  cloud::NodePoolRef ref{{kProject, kZone, "c1"}, "train-1"};
  ASSERT_TRUE(cloud_.connection().gke().DeleteNodePool(ref).ok());
  WaitGone("c1", "train-1");

  // No new revision and no drift check due: nothing is looked at.
  EXPECT_FALSE(r->RunOnce().ran);
  EXPECT_EQ(cloud_.Pools("c1").size(), 1u);

  clock_.Advance(61s);
  EXPECT_LE(r->NextDue(), clock_.Now());
  CycleReport report = r->RunOnce();
  EXPECT_TRUE(report.full);
  EXPECT_EQ(report.actions["create"], 1);
  EXPECT_EQ(report.applied, 1);
  EXPECT_EQ(cloud_.Pools("c1").size(), 2u);
}

TEST_F(ReconcilerTest, ForcePushIsReported) {
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  const std::string a = Commit("a");
  auto r = Make();
  r->RunOnce();
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  const std::string b = Commit("b");
  r->RunOnce();

  Git(dir(), "reset -q --hard " + a);
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 3));
  const std::string c = Commit("c, rewritten history");
  CycleReport report = r->RunOnce();
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("history rewrite"), std::string::npos);
  DaemonStatus s = r->Snapshot();
  EXPECT_EQ(s.history_rewrites, 1u);
  ASSERT_TRUE(s.history_rewrite.has_value());
  EXPECT_EQ(s.history_rewrite->from, b);
  EXPECT_EQ(s.history_rewrite->to, c);
  EXPECT_FALSE(s.history_rewrite->held);
  EXPECT_EQ(cloud_.Pools("c1").size(), 3u);  // reported, and applied
  EXPECT_EQ(s.last_applied_revision, c);
  // Reported once, not on every reconcile.
  EXPECT_TRUE(r->RunOnce().warnings.empty());
}

TEST_F(ReconcilerTest, AForcePushWhileStoppedIsReportedAfterARestart) {
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  const std::string a = Commit("a");
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  const std::string b = Commit("b");
  Make()->RunOnce();  // reconciles b, then "stops"
  EXPECT_EQ(Git(dir(), "rev-parse refs/tpu-provisioner/applied"), b);

  // While no daemon runs, history is rewritten onto a.
  Git(dir(), "reset -q --hard " + a);
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 3));
  const std::string c = Commit("c, rewritten history");

  auto restarted = Make();
  CycleReport report = restarted->RunOnce();
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("history rewrite: " + c + " does not descend from " + b), std::string::npos)
      << report.warnings[0];
  DaemonStatus s = restarted->Snapshot();
  ASSERT_TRUE(s.history_rewrite.has_value());
  EXPECT_EQ(s.history_rewrite->from, b);
  EXPECT_EQ(s.history_rewrite->to, c);
  EXPECT_EQ(Git(dir(), "rev-parse refs/tpu-provisioner/applied"), c);

  // A third run from c sees nothing to report.
  EXPECT_TRUE(Make()->RunOnce().warnings.empty());
}

TEST_F(ReconcilerTest, DryRunRecordsNoAppliedCommit) {
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  Commit("a");
  ReconcilerOptions o;
  o.dry_run = true;
  Make(o)->RunOnce();
  EXPECT_EQ(Git(dir(), "for-each-ref refs/tpu-provisioner"), "");
}

TEST_F(ReconcilerTest, RefuseHistoryRewriteHoldsTheOldCommit) {
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  const std::string a = Commit("a");
  ReconcilerOptions o;
  o.refuse_history_rewrite = true;
  auto r = Make(o);
  r->RunOnce();
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  const std::string b = Commit("b");
  r->RunOnce();
  Git(dir(), "reset -q --hard " + a);
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 3));
  const std::string c = Commit("c");

  CycleReport report = r->RunOnce();
  EXPECT_EQ(report.revision, b);
  EXPECT_EQ(cloud_.Pools("c1").size(), 2u);
  DaemonStatus s = r->Snapshot();
  ASSERT_TRUE(s.history_rewrite.has_value());
  EXPECT_TRUE(s.history_rewrite->held);
  EXPECT_EQ(s.revision, b);

  r->AcceptHistoryRewrite();  // SIGHUP
  report = r->RunOnce();
  EXPECT_EQ(report.revision, c);
  EXPECT_EQ(cloud_.Pools("c1").size(), 3u);
}

TEST_F(ReconcilerTest, OneFileCommitInALargeRepoReparsesOneFile) {
  // 200 manifests across the two targets, planned in dry-run (no applies needed).
  for (int i = 0; i < 200; ++i) {
    std::string c = i % 2 ? "c1" : "c2";
    WriteFile(dir() / ("deploy/tpu-proj/" + c + "/pool-" + std::to_string(i) + ".yaml"),
              PoolYaml("p" + std::to_string(i)));
  }
  Commit("many files");
  ReconcilerOptions o;
  o.dry_run = true;
  auto r = Make(o);
  CycleReport report = r->RunOnce();
  EXPECT_EQ(report.files_parsed, 202u);  // + the two cluster.yaml

  WriteFile(dir() / "deploy/tpu-proj/c1/pool-7.yaml", PoolYaml("p7", 2));
  Commit("one file");
  report = r->RunOnce();
  EXPECT_EQ(report.files_parsed, 1u);
  EXPECT_EQ(report.planned_targets, std::vector<std::string>{"tpu-proj/c1"});
  DaemonStatus s = r->Snapshot();
  EXPECT_EQ(s.files_parsed, 203u);
  std::string metrics = MetricsText(s, {});
  EXPECT_NE(metrics.find("tpu_provisioner_files_parsed_last_load 1\n"), std::string::npos);
  EXPECT_NE(metrics.find("tpu_provisioner_files_parsed_total 203\n"), std::string::npos);
}

TEST_F(ReconcilerTest, AFailingProjectBacksOffWithoutStoppingOthers) {
  WriteFile(dir() / "deploy/other-proj/c9/cluster.yaml", ClusterYaml("c9"));
  WriteFile(dir() / "deploy/other-proj/c9/pools.yaml", PoolYaml("x", 1));
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  Commit("two projects");
  flaky_->broken.insert("other-proj");
  auto r = Make();
  CycleReport report = r->RunOnce();
  EXPECT_FALSE(report.error.ok());
  EXPECT_EQ(report.applied, 1);  // tpu-proj/c1 went ahead
  EXPECT_EQ(cloud_.Pools("c1").size(), 1u);
  TargetReport c9 = Target(*r, "other-proj/c9");
  EXPECT_EQ(c9.state, TargetState::kFailed);
  EXPECT_EQ(c9.consecutive_failures, 1);
  EXPECT_NE(c9.last_error.find("unreachable"), std::string::npos);
  EXPECT_EQ(r->NextDue(), clock_.Now() + 10s);

  // Retried after its backoff, failing again: the delay doubles.
  clock_.Advance(10s);
  report = r->RunOnce();
  EXPECT_EQ(report.planned_targets.size(), 0u);
  EXPECT_EQ(Target(*r, "other-proj/c9").consecutive_failures, 2);
  EXPECT_EQ(r->NextDue(), clock_.Now() + 20s);

  // Healed: the next retry succeeds as far as planning goes (the emulator has
  // no cluster c9 in project "other", so its pool create fails and backs off).
  flaky_->broken.clear();
  clock_.Advance(20s);
  report = r->RunOnce();
  EXPECT_EQ(report.planned_targets, std::vector<std::string>{"other-proj/c9"});
  EXPECT_EQ(Target(*r, "tpu-proj/c1").state, TargetState::kInSync);
}

TEST_F(ReconcilerTest, WorktreeModeAppliesUncommittedFiles) {
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  Commit("two slices");
  auto repo = source::GitRepo::Open(dir().string());
  ASSERT_TRUE(repo.ok());
  source::WorktreeSource worktree(dir().string(), std::make_unique<source::GitRepo>(repo.value()));
  Reconciler r(&worktree, flaky_.get(), &clock_, ReconcilerOptions{});
  CycleReport report = r.RunOnce();
  EXPECT_EQ(report.applied, 2);
  EXPECT_EQ(report.revision.rfind("worktree@", 0), 0u) << report.revision;

  // Saved, not committed: seen, and only that target re-planned.
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 3));
  report = r.RunOnce();
  EXPECT_EQ(report.files_parsed, 1u);
  EXPECT_EQ(report.planned_targets, std::vector<std::string>{"tpu-proj/c1"});
  EXPECT_EQ(cloud_.Pools("c1").size(), 3u);
}

TEST_F(ReconcilerTest, NoRevisionYetIsRetriedOnTheBackoffNotAtOnce) {
  auto r = Make();  // the repository has no commit yet
  CycleReport report = r->RunOnce();
  EXPECT_FALSE(report.error.ok());
  EXPECT_FALSE(r->Snapshot().ready);
  EXPECT_NE(r->Snapshot().last_error, "");
  EXPECT_EQ(r->NextDue(), clock_.Now() + 10s);

  const std::string first = Commit("first");
  report = r->RunOnce();
  EXPECT_TRUE(report.error.ok()) << report.error.ToString();
  EXPECT_TRUE(r->Snapshot().ready);
  EXPECT_EQ(r->Snapshot().last_error, "");
  EXPECT_EQ(r->Snapshot().last_applied_revision, first);
}

}  // namespace
}  // namespace tpu::daemon
