// The Terraform-style text, asserted exactly.
#include "plan/render_text.h"

#include <gtest/gtest.h>

namespace tpu::plan {
namespace {

Plan SmallPlan() {
  Plan plan;
  TargetPlan t;
  t.key = "p/c";
  t.project = "p";
  t.cluster = "c";
  t.location = "us-central2";
  Action create;
  create.kind = ActionKind::kCreate;
  create.resource = {ResourceKind::kNodePool, "p", "us-central2", "c", "train-1"};
  create.reason = "slice 1 declared, not found";
  create.blast = {16, 0, 4, 0, true, false};
  Action update;
  update.kind = ActionKind::kUpdate;
  update.resource = {ResourceKind::kNodePool, "p", "us-central2", "c", "serve-0"};
  update.reason = "updatable fields changed";
  update.changes = {{"config.labels[\"team\"]", "\"a\"", "\"b\"", false}};
  Action replace;
  replace.kind = ActionKind::kReplace;
  replace.resource = {ResourceKind::kNodePool, "p", "us-central2", "c", "train-0"};
  replace.reason = "immutable fields changed";
  replace.changes = {{"placementPolicy.tpuTopology", "\"2x2x2\"", "\"2x2x4\"", true}};
  replace.blast = {16, 8, 4, 2, true, false};
  Action del;
  del.kind = ActionKind::kDelete;
  del.resource = {ResourceKind::kNodePool, "p", "us-central2", "c", "old-0"};
  del.reason = "no longer declared";
  del.blast = {0, 4, 0, 1, false, false};
  Action noop;
  noop.resource = {ResourceKind::kNodePool, "p", "us-central2", "c", "same-0"};
  noop.reason = "in sync";
  t.actions = {del, create, update, replace, noop};
  plan.targets.push_back(t);
  TargetPlan blocked;
  blocked.key = "p/bad";
  blocked.status = TargetStatus::kBlocked;
  blocked.errors = {"deploy/p/bad/a.yaml:3:5: spec.topology: expected AxB"};
  plan.targets.push_back(blocked);
  return plan;
}

TEST(RenderTextTest, TerraformIdiom) {
  EXPECT_EQ(RenderText(SmallPlan()),
            "Target p/c (us-central2)\n"
            "  # nodePool \"old-0\" will be deleted (no longer declared)\n"
            "  - nodePool \"old-0\"  [-4 chips, -1 host]\n"
            "  # nodePool \"train-1\" will be created (slice 1 declared, not found)\n"
            "  + nodePool \"train-1\"  [+16 chips, +4 hosts, multi-host]\n"
            "  # nodePool \"serve-0\" will be updated in place (updatable fields changed)\n"
            "  ~ nodePool \"serve-0\"\n"
            "      config.labels[\"team\"]: \"a\" → \"b\"\n"
            "  # nodePool \"train-0\" must be replaced (immutable fields changed)\n"
            "  -/+ nodePool \"train-0\"  [-8 chips, -2 hosts, +16 chips, +4 hosts, multi-host]\n"
            "      placementPolicy.tpuTopology: \"2x2x2\" → \"2x2x4\"  # forces replacement\n"
            "\n"
            "Target p/bad: blocked\n"
            "  Error: deploy/p/bad/a.yaml:3:5: spec.topology: expected AxB\n"
            "\n"
            "Plan: 1 to create, 1 to update, 1 to replace, 1 to delete. Chips: +32 / -12.\n");
}

TEST(RenderTextTest, NoChanges) {
  Plan plan;
  TargetPlan t;
  t.key = "p/c";
  plan.targets.push_back(t);
  EXPECT_EQ(RenderText(plan), "Target p/c\n  (no changes)\n\nNo changes. Live state matches the manifests.\n");
}

TEST(RenderTextTest, WorkloadOwnedPoolsAreAGroupOfTheirOwn) {
  Plan plan;
  TargetPlan t;
  t.key = "p/c";
  t.workload_pools = {{"train-0a1b", "ml/train", "RUNNING", 8}, {"eval-9f8e", "ml/eval", "PROVISIONING", 4}};
  plan.targets.push_back(t);
  EXPECT_EQ(RenderText(plan),
            "Target p/c\n  (no changes)\n"
            "  Workload-owned node pools (demand-driven; git never changes them): 2 pools, 12 chips\n"
            "    train-0a1b  JobSet ml/train, RUNNING, 8 chips\n"
            "    eval-9f8e  JobSet ml/eval, PROVISIONING, 4 chips\n"
            "\nNo changes. Live state matches the manifests.\n");
}

TEST(RenderTextTest, ColourOnlyWhenAsked) {
  EXPECT_EQ(RenderText(SmallPlan()).find('\033'), std::string::npos);
  EXPECT_NE(RenderText(SmallPlan(), {.color = true}).find("\033[32m+"), std::string::npos);
}

TEST(RenderTextTest, NoopsOnRequest) {
  EXPECT_EQ(RenderText(SmallPlan()).find("same-0"), std::string::npos);
  EXPECT_NE(RenderText(SmallPlan(), {.show_noop = true}).find("nodePool \"same-0\" is in sync"), std::string::npos);
}

// A slice that scales from 0 is possible capacity, and the text says so.
TEST(RenderTextTest, AutoscaledSliceIsPossibleCapacity) {
  Plan plan;
  TargetPlan t;
  t.key = "p/c";
  Action create;
  create.kind = ActionKind::kCreate;
  create.resource = {ResourceKind::kNodePool, "p", "us-central2", "c", "flex-0"};
  create.blast = {64, 0, 16, 0, true, true};
  t.actions = {create};
  plan.targets.push_back(t);
  const std::string text = RenderText(plan);
  EXPECT_NE(text.find("+ nodePool \"flex-0\"  [+64 chips, +16 hosts, multi-host, autoscaled from 0: possible "
                      "capacity]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Chips: +64 / -0 (64 of the + possible: autoscaled, there once workloads ask)."),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace tpu::plan
