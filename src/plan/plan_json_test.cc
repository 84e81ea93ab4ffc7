// The plan document round-trips, and bad documents are refused with a reason.
#include "plan/plan_json.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plan/planner.h"
#include "plan/plan_test_util.h"

namespace tpu::plan {
namespace {

using testing::InSync;
using testing::MakePool;
using testing::MakeTarget;
using testing::RepoOf;

// A plan with every action kind, every resource kind and every optional body field.
Plan RichPlan() {
  manifest::Target t = MakeTarget();
  auto serve = MakePool("serve", "v6e", "2x2", 2);
  serve.node_config.labels = cloud::StringMap{{"team", "a"}};
  serve.node_config.taints = std::vector<manifest::Taint>{{"k", "v", "NoSchedule"}};
  serve.node_config.oauth_scopes = std::vector<std::string>{"cloud-platform"};
  serve.node_config.disk_size_gb = 200;
  serve.node_config.disk_type = "pd-ssd";
  serve.node_config.image_type = "COS_CONTAINERD";
  serve.node_config.service_account = "sa@p.iam.gserviceaccount.com";
  serve.node_config.tags = std::vector<std::string>{"t"};
  serve.node_config.metadata = cloud::StringMap{{"m", "1"}};
  serve.autoscaling = manifest::Autoscaling{true, 1, 3};
  serve.version = "1.30";
  auto train = MakePool("train", "v5p", "2x2x4", 3);
  train.capacity = {manifest::CapacityType::kReservation, "r", "shared"};
  t.pools = {serve, train, MakePool("big", "v7x", "4x4x4")};
  manifest::TPUNodeGroup g;
  g.name = "slice";
  g.project = "p";
  g.node_location = "us-east5-a";
  g.node_count = 4;
  g.topology = "4x4";
  g.shape = *catalog::ResolveShape("v6e", "4x4");
  g.target_size_policy_mode = manifest::TargetSizePolicyMode::kBulk;
  g.instance_config = manifest::TPUNodeGroup::InstanceConfig{};
  g.instance_config->machine_type = "ct6e-standard-4t";
  g.instance_config->boot_disk_size_gb = 100;
  g.instance_config->disk_type = "hyperdisk-balanced";
  g.instance_config->metadata = {{"a", "b"}};
  g.instance_config->service_accounts = {"sa"};
  g.instance_config->network_tags = {"tpu"};
  t.groups.push_back(g);
  t.policy.replace_strategy = manifest::ReplaceStrategy::kCreateBeforeDelete;
  cloud::LiveState live = InSync(t);
  auto& pools = live.projects["p"].clusters[0].node_pools;
  (*pools[0].labels)["team"] = "b";                          // update
  pools[1].machine_type = "ct6e-standard-8t";                // replace
  pools.erase(pools.begin() + 4);                            // train-2: create
  live.projects["p"].clusters[0].node_pools.push_back(pools[2]);
  live.projects["p"].clusters[0].node_pools.back().name = "train-7";  // delete
  t.policy.max_delete_percent = 100;
  PlanOptions o;
  o.tool_version = "0.1.0";
  o.created_at = "2026-11-22T04:00:00Z";
  manifest::Target blocked = MakeTarget("p", "x");
  blocked.errors.push_back({{"deploy/p/x/a.yaml", 1, 1}, "kind", "unknown"});
  manifest::Repo repo = RepoOf({t, blocked});
  repo.errors.push_back({{"deploy/stray.yaml", 0, 0}, "", "outside the layout"});
  return ComputePlan(repo, live, o);
}

TEST(PlanJsonTest, RoundTrips) {
  Plan plan = RichPlan();
  plan.targets[0].workload_pools = {{"train-0a1b", "ml/train", "RUNNING", 8}};
  Summary s = plan.Summarize();
  EXPECT_GT(s.create, 0);
  EXPECT_GT(s.update, 0);
  EXPECT_GT(s.replace, 0);
  EXPECT_GT(s.remove, 0);
  std::string text = PlanToJson(plan);
  Result<Plan> back = PlanFromJson(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(PlanToJson(*back), text);
  EXPECT_EQ(back->targets[0].replace_strategy, manifest::ReplaceStrategy::kCreateBeforeDelete);
  EXPECT_EQ(back->targets[0].actions.size(), plan.targets[0].actions.size());
  EXPECT_EQ(back->live_fingerprints, plan.live_fingerprints);
  EXPECT_EQ(back->targets[0].workload_pools, plan.targets[0].workload_pools);
}

TEST(PlanJsonTest, DocumentShape) {
  nlohmann::json j = nlohmann::json::parse(PlanToJson(RichPlan()));
  EXPECT_EQ(j["schemaVersion"], 1);
  EXPECT_EQ(j["toolVersion"], "0.1.0");
  EXPECT_EQ(j["errors"][0], "deploy/stray.yaml: outside the layout");
  EXPECT_EQ(j["hasErrors"], true);
  EXPECT_EQ(j["targets"][1]["status"], "blocked");
  const auto& a = j["targets"][0]["actions"][0];
  for (const char* key : {"action", "resource", "target", "source", "reason", "changes", "updateCalls",
                          "blastRadius", "dependsOn"})
    EXPECT_TRUE(a.contains(key)) << key;
  EXPECT_TRUE(j["summary"].contains("create"));
}

TEST(PlanJsonTest, OneLine) {
  std::string one = PlanToJson(RichPlan(), -1);
  EXPECT_EQ(one.find('\n'), std::string::npos);
}

TEST(PlanJsonTest, RefusesBadDocuments) {
  EXPECT_EQ(PlanFromJson("{").status().message(), "plan file: not valid JSON");
  EXPECT_EQ(PlanFromJson(R"({"schemaVersion": 2, "targets": []})").status().message(),
            "plan file: schemaVersion 2 is not supported (this tpu-provisioner reads 1)");
  Result<Plan> missing = PlanFromJson(R"({"targets": []})");
  EXPECT_EQ(missing.status().code(), Status::Code::kInvalidArgument);
  std::string text = PlanToJson(RichPlan());
  size_t at = text.find("\"action\": \"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 11, "\"action\": \"explode");
  Result<Plan> bad = PlanFromJson(text);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown value"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace tpu::plan
