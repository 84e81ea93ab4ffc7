// The gate's decisions on plans built by hand: cleanupOnly, break-glass,
// warn-mode drift against a baseline, change windows on a fake clock.
#include "daemon/target_gate.h"

#include <gtest/gtest.h>

#include "base/change_windows.h"

namespace tpu::daemon {
namespace {

plan::Action PoolAction(plan::ActionKind kind, const std::string& name, int created = 0, int destroyed = 0) {
  plan::Action a;
  a.kind = kind;
  a.resource = {plan::ResourceKind::kNodePool, "p", "us-central2", "c", name};
  a.blast.chips_created = created;
  a.blast.chips_destroyed = destroyed;
  return a;
}

std::vector<std::string> Names(const std::vector<plan::Action>& actions) {
  std::vector<std::string> out;
  for (const auto& a : actions) out.push_back(a.resource.name);
  return out;
}

plan::TargetPlan Plan(std::vector<plan::Action> actions) {
  plan::TargetPlan t;
  t.key = "p/c";
  t.project = "p";
  t.cluster = "c";
  t.actions = std::move(actions);
  return t;
}

TEST(TargetGateTest, CleanupOnlyKeepsDeletesShrinksAndRepairs) {
  cloud::ProjectState live;
  cloud::Cluster c;
  c.name = "c";
  cloud::NodePool broken;
  broken.name = "broken-0";
  broken.status = "ERROR";
  cloud::NodePool changed;
  changed.name = "changed-0";
  changed.status = "RUNNING";
  c.node_pools = {broken, changed};
  live.clusters = {c};
  manifest::ClusterPolicy policy;
  policy.mode = manifest::TargetMode::kCleanupOnly;
  plan::TargetPlan t = Plan({PoolAction(plan::ActionKind::kDelete, "old-0", 0, 16),
                             PoolAction(plan::ActionKind::kCreate, "new-0", 16),
                             PoolAction(plan::ActionKind::kResize, "shrink-0", 0, 4),
                             PoolAction(plan::ActionKind::kResize, "grow-0", 4, 0),
                             PoolAction(plan::ActionKind::kReplace, "broken-0", 16, 16),
                             PoolAction(plan::ActionKind::kReplace, "changed-0", 16, 16),
                             PoolAction(plan::ActionKind::kUpdate, "labels-0")});
  GateInput in;
  in.policy = &policy;
  in.manifests_changed = true;
  in.live = &live;
  GateDecision d = GateTarget(t, in);
  EXPECT_EQ(Names(d.allowed), (std::vector<std::string>{"old-0", "shrink-0", "broken-0"}));
  EXPECT_EQ(d.held, 4);
  EXPECT_EQ(d.held_reason, "mode cleanupOnly: only deletes, shrinks and repairs of ERROR pools");
}

TEST(TargetGateTest, WarnModeAppliesTheCommitAndLeavesDrift) {
  manifest::ClusterPolicy policy;
  policy.drift = manifest::DriftMode::kWarn;
  plan::Action drifted = PoolAction(plan::ActionKind::kUpdate, "serve-0");
  drifted.changes = {{"config.labels[\"team\"]", "\"b\"", "\"a\"", false}};
  plan::TargetPlan now = Plan({drifted, PoolAction(plan::ActionKind::kCreate, "train-0", 16)});
  plan::TargetPlan baseline = Plan({drifted});  // the old desired state would also revert the label
  GateInput in;
  in.policy = &policy;
  in.manifests_changed = true;
  in.baseline = &baseline;
  GateDecision d = GateTarget(now, in);
  EXPECT_EQ(Names(d.allowed), (std::vector<std::string>{"train-0"}));
  EXPECT_EQ(d.drift, (std::vector<std::string>{"update nodePool serve-0"}));
  EXPECT_TRUE(d.drift_held);
  // Nothing committed: everything is drift, and nothing is applied.
  in.manifests_changed = false;
  in.baseline = nullptr;
  d = GateTarget(now, in);
  EXPECT_TRUE(d.allowed.empty());
  EXPECT_EQ(d.drift.size(), 2u);
  // Correct mode reports the same drift and applies it.
  policy.drift = manifest::DriftMode::kCorrect;
  d = GateTarget(now, in);
  EXPECT_EQ(d.allowed.size(), 2u);
  EXPECT_EQ(d.drift.size(), 2u);
  EXPECT_FALSE(d.drift_held);
}

TEST(TargetGateTest, ClosedWindowHoldsEverythingUntilItOpensUnlessBreakGlass) {
  manifest::ClusterPolicy policy;
  manifest::ChangeWindow deny;
  deny.allow = false;
  deny.start = "2026-11-24T00:00:00Z";
  deny.end = "2026-11-24T06:00:00Z";
  policy.change_windows = {deny};
  plan::TargetPlan t = Plan({PoolAction(plan::ActionKind::kCreate, "a-0", 4), PoolAction(plan::ActionKind::kDelete, "b-0", 0, 4)});
  GateInput in;
  in.policy = &policy;
  in.manifests_changed = true;
  in.now_utc = ParseRfc3339("2026-11-24T01:00:00Z").value();
  GateDecision d = GateTarget(t, in);
  EXPECT_TRUE(d.allowed.empty());
  EXPECT_TRUE(d.window_closed);
  EXPECT_EQ(d.held, 2);
  EXPECT_EQ(FormatRfc3339(d.held_until.value()), "2026-11-24T06:00:00Z");
  EXPECT_EQ(d.held_reason, "change window closed: deny window 0 (2026-11-24T00:00:00Z to 2026-11-24T06:00:00Z)");
  in.break_glass = true;
  EXPECT_EQ(GateTarget(t, in).allowed.size(), 2u);
  in.break_glass = false;
  in.now_utc = ParseRfc3339("2026-11-24T06:00:00Z").value();
  EXPECT_EQ(GateTarget(t, in).allowed.size(), 2u);
}

TEST(TargetGateTest, HeldDependenciesHoldTheirDependants) {
  manifest::ClusterPolicy policy;
  policy.mode = manifest::TargetMode::kCleanupOnly;
  plan::Action tmpl = PoolAction(plan::ActionKind::kCreate, "tmpl");
  plan::Action del = PoolAction(plan::ActionKind::kDelete, "mig", 0, 4);
  del.depends_on = {tmpl.resource.Id()};
  GateInput in;
  in.policy = &policy;
  in.manifests_changed = true;
  GateDecision d = GateTarget(Plan({tmpl, del}), in);
  EXPECT_TRUE(d.allowed.empty());
  EXPECT_EQ(d.held, 2);
}

TEST(TargetGateTest, BreakGlassTrailer) {
  EXPECT_TRUE(HasBreakGlassTrailer("Grow v6e now\n\nThe launch needs it.\n\nTPU-Provisioner: break-glass\n"));
  EXPECT_TRUE(HasBreakGlassTrailer("x\n\nSigned-off-by: a <a@b>\ntpu-provisioner: Break-Glass\n"));
  EXPECT_FALSE(HasBreakGlassTrailer("TPU-Provisioner: break-glass\n\nbody only mentions it above"));
  EXPECT_FALSE(HasBreakGlassTrailer("x\n\nTPU-Provisioner: later\n"));
}

}  // namespace
}  // namespace tpu::daemon
