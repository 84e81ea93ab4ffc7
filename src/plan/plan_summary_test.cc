// A plan at fleet size, as people read it: 2,000 actions over five clusters,
// computed by the real planner from manifests and live state, shown grouped
// (summary mode) and compared with a golden file; the full listing and the
// JSON document still hold every action. TPU_UPDATE_GOLDEN=1 rewrites the file.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plan/action_groups.h"
#include "plan/plan_json.h"
#include "plan/planner.h"
#include "plan/render_text.h"
#include "plan/fleet_plan.h"
#include "plan/plan_test_util.h"

namespace tpu::plan {
namespace {

using testing::FleetPlan;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST(PlanSummaryTest, TwoThousandActionsGroupedMatchTheGoldenFile) {
  Plan plan = FleetPlan();
  ASSERT_EQ(plan.Summarize().create + plan.Summarize().replace + plan.Summarize().remove, 2000);
  std::string text = RenderText(plan);  // default --summary-over 200
  const std::string golden = std::string(TPU_SOURCE_DIR) + "/tests/plan/golden/summary_2000.txt";
  if (const char* update = std::getenv("TPU_UPDATE_GOLDEN"); update && std::string(update) == "1")
    std::ofstream(golden) << text;
  EXPECT_EQ(text, ReadFile(golden));
  // Four groups a cluster, a line each, instead of two lines an action.
  EXPECT_LT(Lines(text), 40);
}

TEST(PlanSummaryTest, FullAndJsonKeepEveryAction) {
  Plan plan = FleetPlan();
  std::string full = RenderText(plan, {.full = true});
  EXPECT_GE(Lines(full), 4000);
  EXPECT_NE(full.find("+ nodePool \"v6e-spot-149\""), std::string::npos);
  auto doc = nlohmann::json::parse(PlanToJson(plan));
  size_t actions = 0;
  for (const auto& t : doc["targets"]) actions += t["actions"].size();
  EXPECT_EQ(actions, 2000u);
  EXPECT_EQ(doc["targets"][0]["actions"][0]["destroyedShape"],
            (nlohmann::json{{"generation", "v5e"}, {"topology", "2x4"}, {"capacityType", "onDemand"}}));
}

TEST(PlanSummaryTest, ThresholdIsTheNumberOfActions) {
  Plan plan = FleetPlan();
  EXPECT_EQ(RenderText(plan, {.summary_over = 2000}), RenderText(plan, {.full = true}));
  EXPECT_NE(RenderText(plan, {.summary_over = 1999}), RenderText(plan, {.full = true}));
}

TEST(PlanSummaryTest, TotalsCountChipsByGenerationAndCapacityType) {
  std::string text = RenderText(FleetPlan());
  // 5 × (150 × 16 v6e + 100 × 16 v5p + 50 × 4 v5e created; 50 × 4 + 100 × 8 v5e destroyed).
  EXPECT_NE(text.find("Plan: 1250 to create, 0 to update, 250 to replace, 500 to delete. "
                      "Chips: +21000 / -5000 (v5e onDemand -5000; v5e spot +1000; "
                      "v5p onDemand +8000; v6e spot +12000)."),
            std::string::npos)
      << text;
}

TEST(ActionGroupsTest, NameRanges) {
  auto names = [](std::vector<std::string> v) {
    static std::vector<Action> store;
    store.clear();
    for (auto& n : v) {
      Action a;
      a.resource.name = n;
      store.push_back(a);
    }
    std::vector<const Action*> out;
    for (const auto& a : store) out.push_back(&a);
    return NameRange(out);
  };
  EXPECT_EQ(names({"v6e-spot-0", "v6e-spot-1", "v6e-spot-2", "v6e-spot-3"}), "v6e-spot-0 … -3");
  EXPECT_EQ(names({"old-9", "old-8", "old-7", "old-6"}), "old-6 … -9");  // deletes run highest first
  EXPECT_EQ(names({"a-0", "a-1", "a-3", "a-4"}), "a-0, a-1, … a-4");  // a gap is no run
  EXPECT_EQ(names({"x", "y"}), "x, y");
}

}  // namespace
}  // namespace tpu::plan
