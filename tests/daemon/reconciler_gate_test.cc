// The reconcile loop with spec.drift, spec.mode and spec.changeWindows, against
// a real git repository and the cloud emulator, on a FakeEnv whose wall
// time the test sets: drift left alone in warn mode while a commit still
// applies; a deny window holding a commit's creates until it opens (and
// /status saying until when); a break-glass commit going through; cleanupOnly
// deleting but never creating.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "base/change_windows.h"
#include "base/fake_env.h"
#include "daemon/daemon_fixture.h"
#include "source/git_sources.h"
#include "daemon/metrics_text.h"
#include "daemon/reconciler.h"
#include "daemon/status_json.h"

namespace tpu::daemon {
namespace {

using namespace testing;
using namespace std::chrono_literals;

std::chrono::system_clock::time_point Wall(const std::string& rfc3339) {
  return std::chrono::system_clock::time_point{} + std::chrono::seconds(ParseRfc3339(rfc3339).value());
}

class ReconcilerGateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    InitRepo(dir());
    auto repo = source::GitRepo::Open(dir().string());
    ASSERT_TRUE(repo.ok()) << repo.status().ToString();
    source_ = std::make_unique<source::CheckoutSource>(repo.value());
    cloud_port_ = std::make_unique<ConnectionCloud>(&cloud_.connection(), FastExecuteOptions());
    clock_.SetWall(Wall("2026-11-27T12:00:00Z"));  // a Friday, noon UTC
  }
  std::unique_ptr<Reconciler> Make(ReconcilerOptions o = {}) {
    o.backoff.initial = 10s;
    return std::make_unique<Reconciler>(source_.get(), cloud_port_.get(), &clock_, o);
  }
  void Cluster(const std::string& extra) {
    WriteFile(dir() / "deploy/tpu-proj/c1/cluster.yaml", ClusterYaml("c1") + extra);
  }
  TargetReport Target(const Reconciler& r) {
    for (const auto& t : r.Snapshot().targets)
      if (t.key == "tpu-proj/c1") return t;
    ADD_FAILURE() << "no target";
    return {};
  }
  const std::filesystem::path& dir() const { return tmp_.path(); }

  TempDir tmp_;
  CloudFixture cloud_;
  FakeEnv clock_;
  std::unique_ptr<source::CheckoutSource> source_;
  std::unique_ptr<ConnectionCloud> cloud_port_;
};

TEST_F(ReconcilerGateTest, DenyWindowHoldsACommitUntilItOpens) {
  Cluster("  changeWindows:\n    - kind: deny\n      schedule: \"0 18 * * 5\"\n      duration: 64h\n"
          "      timeZone: Europe/Paris\n");
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  CommitAll(dir(), "one slice");
  ReconcilerOptions o;
  o.drift_interval = std::chrono::hours(100);
  auto r = Make(o);
  ASSERT_EQ(r->RunOnce().applied, 1);  // Friday noon: open

  clock_.SetWall(Wall("2026-11-27T19:00:00Z"));  // Friday 20:00 in Paris: the freeze
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 3));
  CommitAll(dir(), "three slices");
  CycleReport held = r->RunOnce();
  EXPECT_TRUE(held.ran);
  EXPECT_EQ(held.actions["create"], 2);  // planned …
  EXPECT_EQ(held.applied, 0);            // … not applied
  EXPECT_EQ(cloud_.Pools("c1").size(), 1u);
  TargetReport t = Target(*r);
  EXPECT_EQ(t.state, TargetState::kWaitingForWindow);
  EXPECT_EQ(t.held_actions, 2);
  EXPECT_EQ(FormatRfc3339(t.held_until), "2026-11-30T09:00:00Z");  // Monday 10:00 in Paris
  auto status = StatusJson(r->Snapshot());
  EXPECT_EQ(status["targets"][0]["state"], "waiting-for-window");
  EXPECT_EQ(status["targets"][0]["held"]["until"], "2026-11-30T09:00:00Z");
  EXPECT_NE(status["targets"][0]["held"]["reason"].get<std::string>().find("deny window 0 (0 18 * * 5"),
            std::string::npos);
  // The loop wakes when the window opens, not before.
  EXPECT_LE(r->NextDue(), clock_.Now() + std::chrono::hours(62));
  EXPECT_GT(r->NextDue(), clock_.Now() + std::chrono::hours(61));

  clock_.Advance(std::chrono::hours(62));  // Monday 09:00 UTC
  CycleReport opened = r->RunOnce();
  EXPECT_EQ(opened.applied, 2);
  EXPECT_EQ(cloud_.Pools("c1").size(), 3u);
  EXPECT_EQ(Target(*r).state, TargetState::kInSync);
  EXPECT_EQ(Target(*r).held_actions, 0);
}

TEST_F(ReconcilerGateTest, BreakGlassCommitGoesThroughAClosedWindow) {
  Cluster("  changeWindows:\n    - kind: allow\n      schedule: \"0 9 * * 1-5\"\n      duration: 8h\n");
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  CommitAll(dir(), "one slice");
  clock_.SetWall(Wall("2026-11-28T12:00:00Z"));  // Saturday: outside every allow window
  auto r = Make();
  EXPECT_EQ(r->RunOnce().applied, 0);
  EXPECT_EQ(Target(*r).state, TargetState::kWaitingForWindow);
  EXPECT_EQ(Target(*r).held_reason, "change window closed: outside every allow window");

  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  CommitAll(dir(), "two slices, now\n\nThe launch cannot wait for Monday.\n\nTPU-Provisioner: break-glass\n");
  EXPECT_EQ(r->RunOnce().applied, 2);
  EXPECT_EQ(cloud_.Pools("c1").size(), 2u);
}

TEST_F(ReconcilerGateTest, CleanupOnlyDeletesButNeverCreates) {
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2) + "---\n" + PoolYaml("old", 1));
  Cluster("");
  CommitAll(dir(), "three pools");
  auto r = Make();
  ASSERT_EQ(r->RunOnce().applied, 3);

  Cluster("  mode: cleanupOnly\n  maxDeletePercent: 100\n");
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 3));  // grow train, drop old
  CommitAll(dir(), "cleanup only");
  CycleReport report = r->RunOnce();
  EXPECT_EQ(report.applied, 1);  // the delete
  EXPECT_EQ((cloud_.Pools("c1")), (std::map<std::string, int>{{"train-0", 1}, {"train-1", 1}}));
  TargetReport t = Target(*r);
  EXPECT_EQ(t.state, TargetState::kHeld);
  EXPECT_EQ(t.held_actions, 1);
}

TEST_F(ReconcilerGateTest, WarnModeReportsDriftAndStillAppliesCommits) {
  Cluster("  drift: warn\n");
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  CommitAll(dir(), "two slices");
  ReconcilerOptions o;
  o.drift_interval = 1min;
  auto r = Make(o);
  ASSERT_EQ(r->RunOnce().applied, 2);

  // Behind git's back: a slice deleted.
  cloud::NodePoolRef ref{{kProject, kZone, "c1"}, "train-1"};
  ASSERT_TRUE(cloud_.connection().gke().DeleteNodePool(ref).ok());
  while (cloud_.Pools("c1").count("train-1")) std::this_thread::sleep_for(5ms);

  clock_.Advance(61s);
  CycleReport drift = r->RunOnce();
  EXPECT_TRUE(drift.full);
  EXPECT_EQ(drift.applied, 0);  // warn: left alone
  TargetReport t = Target(*r);
  EXPECT_EQ(t.state, TargetState::kDrifted);
  EXPECT_EQ(t.drift, (std::vector<std::string>{"create nodePool train-1"}));
  const int64_t first_seen = t.drift_since;
  EXPECT_GT(first_seen, 0);

  clock_.Advance(61s);
  r->RunOnce();
  t = Target(*r);
  EXPECT_EQ(t.drift_since, first_seen);  // first seen stays
  EXPECT_NEAR(t.drift_seconds, 61, 1);
  std::string metrics = MetricsText(r->Snapshot(), {});
  EXPECT_NE(metrics.find("tpu_provisioner_drift_resources{target=\"tpu-proj/c1\"} 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("tpu_provisioner_drift_seconds{target=\"tpu-proj/c1\"} 61"), std::string::npos) << metrics;

  // A commit still applies, and only what it brings: train-1 stays drifted.
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2) + "---\n" + PoolYaml("serve", 1));
  CommitAll(dir(), "add serve");
  CycleReport commit = r->RunOnce();
  EXPECT_EQ(commit.applied, 1);
  EXPECT_EQ((cloud_.Pools("c1")), (std::map<std::string, int>{{"serve-0", 1}, {"train-0", 1}}));
  EXPECT_EQ(Target(*r).drift, (std::vector<std::string>{"create nodePool train-1"}));

  // Back to correct: the next drift check puts train-1 back.
  Cluster("");
  CommitAll(dir(), "correct drift");
  clock_.Advance(61s);
  r->RunOnce();
  EXPECT_EQ(cloud_.Pools("c1").size(), 3u);
  EXPECT_EQ(Target(*r).drift_since, 0);
}

}  // namespace
}  // namespace tpu::daemon
