// The pull-request Markdown (`plan -o markdown`), compared with golden files:
// the example project's first plan, a 2,000-action fleet plan fitted into
// 65,000 bytes by shortening its largest targets, and a plan a guard refuses.
// TPU_UPDATE_GOLDEN=1 rewrites the files.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "manifest/disk_tree.h"
#include "manifest/loader.h"
#include "plan/planner.h"
#include "plan/render_markdown.h"
#include "plan/fleet_plan.h"
#include "plan/plan_test_util.h"

namespace tpu::plan {
namespace {

using testing::FleetPlan;
using testing::MakeCluster;
using testing::MakePool;
using testing::MakeTarget;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void ExpectGolden(const std::string& text, const std::string& name) {
  const std::string golden = std::string(TPU_SOURCE_DIR) + "/tests/plan/golden/" + name;
  if (const char* update = std::getenv("TPU_UPDATE_GOLDEN"); update && std::string(update) == "1")
    std::ofstream(golden) << text;
  EXPECT_EQ(text, ReadFile(golden)) << "golden " << name;
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// example-project/ against a project whose clusters exist and hold nothing.
Plan ExamplePlan() {
  auto tree = manifest::DiskTree::Open(std::string(TPU_SOURCE_DIR) + "/example-project");
  EXPECT_TRUE(tree.ok());
  manifest::Repo repo = manifest::LoadRepo(**tree);
  EXPECT_TRUE(repo.AllErrors().empty());
  cloud::LiveState live;
  for (const auto& t : repo.targets) {
    auto& ps = live.projects[t.project];
    ps.project = t.project;
    ps.clusters.push_back(MakeCluster(t.project, t.cluster, t.policy.location.value_or("us-central1")));
  }
  PlanOptions o;
  o.fingerprint_live = false;
  return ComputePlan(repo, live, o);
}

TEST(PlanMarkdownTest, ExampleProjectThreeTargets) {
  Plan plan = ExamplePlan();
  ASSERT_EQ(plan.targets.size(), 3u);
  std::string md = RenderMarkdown(plan);
  ExpectGolden(md, "markdown_example.md");
  EXPECT_EQ(Count(md, "<details>"), 3u);  // one collapsible section per target
  EXPECT_EQ(md.find("[!NOTE]"), std::string::npos);  // nothing shortened
  // The totals come before any section.
  EXPECT_LT(md.find("**Plan: "), md.find("<details>"));
}

TEST(PlanMarkdownTest, TwoThousandActionsFitSixtyFiveThousandBytes) {
  Plan plan = FleetPlan();
  std::string whole = RenderMarkdown(plan, {.max_bytes = 100'000'000});
  ASSERT_GT(whole.size(), kDefaultMarkdownMaxBytes);  // the case the limit exists for
  std::string md = RenderMarkdown(plan);
  ExpectGolden(md, "markdown_2000.md");
  EXPECT_LE(md.size(), kDefaultMarkdownMaxBytes);
  EXPECT_NE(md.find("> [!NOTE]\n> Shortened to fit 65000 bytes:"), std::string::npos);
  // The totals and every target's row survive; the sections collapse, none is cut.
  EXPECT_NE(md.find("**Plan: 1250 to create, 0 to update, 250 to replace, 500 to delete.** Chips **+21000 / -5000**"),
            std::string::npos);
  for (int c = 0; c < testing::kFleetClusters; ++c)
    EXPECT_NE(md.find("| `ml-prod/train-" + std::to_string(c) + "` | changes | 250 | 0 | 50 | 100 |"),
              std::string::npos);
  EXPECT_EQ(Count(md, "<details>"), Count(md, "</details>"));
  EXPECT_EQ(Count(md, "~~~diff\n"), Count(md, "~~~\n"));
}

TEST(PlanMarkdownTest, ShortensLargestTargetsFirst) {
  Plan plan = FleetPlan();
  // A small extra target that must keep its full listing while the big ones shrink.
  TargetPlan small;
  small.key = "ml-prod/tiny";
  small.project = "ml-prod";
  small.cluster = "tiny";
  Action a;
  a.kind = ActionKind::kCreate;
  a.resource = {ResourceKind::kNodePool, "ml-prod", "us-central2", "tiny", "tiny-0"};
  a.blast = {4, 0, 1, 0, false, false};
  small.actions = {a};
  plan.targets.push_back(small);
  std::string md = RenderMarkdown(plan, {.max_bytes = 4'000});
  EXPECT_LE(md.size(), 4'000u);
  EXPECT_NE(md.find("+ nodePool \"tiny-0\""), std::string::npos) << md;
  EXPECT_NE(md.find("details left out for"), std::string::npos);
}

TEST(PlanMarkdownTest, TinyLimitDropsRowsAndSaysSo) {
  std::string md = RenderMarkdown(FleetPlan(), {.max_bytes = 800});
  EXPECT_LE(md.size(), 800u);
  EXPECT_NE(md.find("**Plan: 1250 to create"), std::string::npos);
  EXPECT_NE(md.find("more targets, left out to fit 800 bytes"), std::string::npos) << md;
  EXPECT_EQ(Count(md, "<details>"), 0u);
}

// A target whose new manifests delete most of what it owns (the mass-delete
// guard refuses it), beside one blocked by a manifest error.
Plan GuardedPlan() {
  manifest::Target before = MakeTarget("ml-prod", "train");
  before.pools = {MakePool("old", "v5p", "2x2x4", 6), MakePool("keep", "v5p", "2x2x4", 1)};
  cloud::LiveState live = testing::InSync(before);
  manifest::Target now = MakeTarget("ml-prod", "train");
  now.pools = {MakePool("keep", "v5p", "2x2x4", 1), MakePool("new", "v6e", "2x4", 2)};
  manifest::Target broken = MakeTarget("ml-prod", "serve");
  broken.errors.push_back({{"deploy/ml-prod/serve/pools.yaml", 7, 13}, "spec.topology",
                           "topology 3x3 is not valid for tpu-v6e-slice (expected one of 1x1, 2x2, 2x4, …)"});
  live.projects["ml-prod"].clusters.push_back(MakeCluster("ml-prod", "serve"));
  PlanOptions o;
  o.fingerprint_live = false;
  return ComputePlan(testing::RepoOf({broken, now}), live, o);
}

TEST(PlanMarkdownTest, GuardThatRefusesComesFirst) {
  Plan plan = GuardedPlan();
  std::string md = RenderMarkdown(plan);
  ExpectGolden(md, "markdown_guard.md");
  size_t caution = md.find("> [!CAUTION]\n> **1 target refused by a guard, 1 target blocked");
  ASSERT_NE(caution, std::string::npos) << md;
  EXPECT_LT(caution, md.find("No changes"));
  EXPECT_NE(md.find("`ml-prod/train` **refused**: "), std::string::npos);
  EXPECT_NE(md.find("pools.yaml:7:13: spec.topology"), std::string::npos);
}

TEST(PlanMarkdownTest, ManifestTextCannotBreakTheMarkup) {
  Plan plan;
  TargetPlan t;
  t.key = "p/c";
  t.status = TargetStatus::kBlocked;
  t.errors = {"a.yaml:1:1: metadata.name: \"<details>|x\" is `bad`"};
  plan.targets.push_back(t);
  std::string md = RenderMarkdown(plan);
  EXPECT_NE(md.find("\"&lt;details&gt;\\|x\" is \\`bad\\`"), std::string::npos) << md;
  EXPECT_EQ(Count(md, "<details>"), 1u);
}

}  // namespace
}  // namespace tpu::plan
