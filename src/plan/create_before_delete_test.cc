// Replacement names and slots (pool_slot.h): with CreateBeforeDelete a replaced
// pool's successor is created under a deterministic temporary name beside it;
// the plan after the replace is clean, never renames back, and a run that
// stopped between the create and the delete converges (the old pool is
// deleted as superseded, nothing is created twice).
#include <gtest/gtest.h>

#include "plan/ownership.h"
#include "plan/plan_json.h"
#include "plan/plan_test_util.h"
#include "plan/planner.h"
#include "plan/pool_slot.h"

namespace tpu::plan {
namespace {

using testing::AsReported;
using testing::InSync;
using testing::MakePool;
using testing::MakeTarget;
using testing::RepoOf;
using testing::Steps;

cloud::NodePool& LivePool(cloud::LiveState& live, const std::string& name) {
  for (auto& p : live.projects["p"].clusters.at(0).node_pools)
    if (p.name == name) return p;
  ADD_FAILURE() << "no live pool " << name;
  static cloud::NodePool none;
  return none;
}

// A v6e 2x4 slice as one 8t VM; the manifest then moves it to two 4t VMs (a replace).
struct Fixture {
  manifest::Target target = MakeTarget();
  cloud::LiveState live;
  Fixture() {
    target.policy.replace_strategy = manifest::ReplaceStrategy::kCreateBeforeDelete;
    target.pools.push_back(MakePool("serve", "v6e", "2x4"));
    live = InSync(target);
    target.pools[0] = MakePool("serve", "v6e", "1x1");  // another shape: forces a replace
  }
  Plan Compute() const { return ComputePlan(RepoOf({target}), live, {}); }
  // What the cloud holds once `pool` was created as GKE reports it.
  void Create(const cloud::NodePool& pool) { live.projects["p"].clusters[0].node_pools.push_back(AsReported(pool)); }
  void Delete(const std::string& name) {
    auto& pools = live.projects["p"].clusters[0].node_pools;
    std::erase_if(pools, [&](const cloud::NodePool& p) { return p.name == name; });
  }
};

TEST(ReplacementNameTest, DeterministicFitsGkeAndNeverLooksLikeASlot) {
  cloud::NodePool a;
  a.name = "serve-0";
  a.machine_type = "ct6e-standard-4t";
  std::string n = ReplacementPoolName(a);
  EXPECT_EQ(n, ReplacementPoolName(a)) << "same slot and spec, same name";
  EXPECT_EQ(n.rfind("serve-0-r", 0), 0u) << n;
  EXPECT_EQ(n.size(), std::string("serve-0-r").size() + 8);
  cloud::NodePool b = a;
  b.machine_type = "ct6e-standard-8t";
  EXPECT_NE(ReplacementPoolName(b), n) << "another spec, another name";
  cloud::NodePool other = a;
  other.name = "serve-1";
  EXPECT_NE(ReplacementPoolName(other), n) << "another slot, another name";

  cloud::NodePool longest;
  longest.name = std::string(38, 'a') + "-9";  // a 40-character slot
  std::string ln = ReplacementPoolName(longest);
  EXPECT_EQ(ln.size(), kMaxPoolNameLength) << ln;
  EXPECT_EQ(ln.substr(0, 30), std::string(30, 'a'));
  EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(ln.back())));
}

TEST(SlotTest, LabelledPoolFillsItsSlotOthersTheirOwnName) {
  cloud::NodePool p;
  p.name = "serve-0";
  EXPECT_EQ(SlotOf(p), "serve-0");
  cloud::NodePool r = AsPoolNamed(p, "serve-0-rdeadbeef");
  EXPECT_EQ(r.name, "serve-0-rdeadbeef");
  EXPECT_EQ(r.resource_labels->at(kSlotLabel), "serve-0");
  EXPECT_EQ(SlotOf(r), "serve-0");
  EXPECT_FALSE(AsPoolNamed(p, "serve-0").resource_labels) << "no slot label under the slot's own name";
}

TEST(CreateBeforeDeleteTest, ReplacementGetsTheTemporaryNameAndTheSlotLabel) {
  Fixture f;
  Plan plan = f.Compute();
  const TargetPlan& tp = plan.targets[0];
  ASSERT_EQ(Steps(tp), std::vector<std::string>{"replace serve-0"});
  const Action& a = tp.actions[0];
  ASSERT_TRUE(a.node_pool);
  std::string want = ReplacementPoolName(BuildDesired(f.target).pools[0].pool);
  EXPECT_EQ(a.node_pool->name, want);
  EXPECT_EQ(a.node_pool->resource_labels->at(kSlotLabel), "serve-0");
  EXPECT_EQ(a.node_pool->resource_labels->at(cloud::kManagedLabel), "true");
  EXPECT_EQ(a.reason, "replaced because config.machineType cannot change in place (a TPU slice's shape is "
                      "fixed when its pool is created); the new pool must obtain its TPU capacity again; the "
                      "replacement " + want + " is created before serve-0 is deleted");
  // The saved plan keeps the name (apply FILE executes exactly this).
  auto back = PlanFromJson(PlanToJson(plan));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->targets[0].actions[0].node_pool->name, want);
}

TEST(CreateBeforeDeleteTest, DeleteBeforeCreateKeepsTheSlotName) {
  Fixture f;
  f.target.policy.replace_strategy = manifest::ReplaceStrategy::kDeleteBeforeCreate;
  Plan plan = f.Compute();
  const Action& a = plan.targets[0].actions[0];
  EXPECT_EQ(a.kind, ActionKind::kReplace);
  EXPECT_EQ(a.node_pool->name, "serve-0");
  EXPECT_FALSE(a.node_pool->resource_labels->count(kSlotLabel));
}

TEST(CreateBeforeDeleteTest, AfterTheReplaceThePlanIsCleanAndNeverRenamesBack) {
  Fixture f;
  cloud::NodePool created = *f.Compute().targets[0].actions[0].node_pool;
  f.Create(created);
  f.Delete("serve-0");
  Plan plan = f.Compute();
  EXPECT_FALSE(plan.HasChanges()) << Steps(plan.targets[0]).front();
  ASSERT_EQ(plan.targets[0].actions.size(), 1u);
  EXPECT_EQ(plan.targets[0].actions[0].resource.name, created.name);
  EXPECT_EQ(plan.targets[0].actions[0].reason, "in sync");
  // An in-place change goes to the pool under its temporary name.
  f.target.pools[0].node_config.labels = cloud::StringMap{{"team", "a"}};
  Plan update = f.Compute();
  EXPECT_EQ(Steps(update.targets[0]), std::vector<std::string>{"update " + created.name});
  EXPECT_EQ(update.targets[0].actions[0].node_pool->resource_labels->at(kSlotLabel), "serve-0")
      << "the update keeps the slot label";
}

TEST(CreateBeforeDeleteTest, ASecondReplaceGetsANewNameAndTheFirstReplacementIsDeleted) {
  Fixture f;
  cloud::NodePool first = *f.Compute().targets[0].actions[0].node_pool;
  f.Create(first);
  f.Delete("serve-0");
  f.target.pools[0] = MakePool("serve", "v6e", "2x2");
  const TargetPlan tp = f.Compute().targets[0];
  ASSERT_EQ(Steps(tp), std::vector<std::string>{"replace " + first.name});
  EXPECT_NE(tp.actions[0].node_pool->name, first.name);
  EXPECT_NE(tp.actions[0].node_pool->name, "serve-0");
  EXPECT_EQ(tp.actions[0].node_pool->name.rfind("serve-0-r", 0), 0u);
}

TEST(CreateBeforeDeleteTest, InterruptedBetweenCreateAndDeleteConverges) {
  Fixture f;
  cloud::NodePool created = *f.Compute().targets[0].actions[0].node_pool;
  f.Create(created);  // the run stopped here: both pools exist
  LivePool(f.live, created.name).status = "PROVISIONING";
  Plan plan = f.Compute();
  const TargetPlan& tp = plan.targets[0];
  EXPECT_EQ(Steps(tp), std::vector<std::string>{"delete serve-0"}) << "nothing is created twice";
  const Action& del = tp.actions[0];
  EXPECT_EQ(del.superseded_by, created.name);
  EXPECT_EQ(del.reason, "slot serve-0 is filled by " + created.name +
                            ": left by an interrupted create-before-delete replace");
  EXPECT_EQ(tp.delete_chips, 0) << "the slot stays filled: not a mass delete";
  EXPECT_EQ(tp.status, TargetStatus::kPlanned);
  auto back = PlanFromJson(PlanToJson(plan));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->targets[0].actions[0].superseded_by, created.name);
  f.Delete("serve-0");
  LivePool(f.live, created.name).status = "RUNNING";
  EXPECT_FALSE(f.Compute().HasChanges());
}

TEST(CreateBeforeDeleteTest, BrokenReplacementIsDeletedAndTheOldPoolReplacedAgain) {
  Fixture f;
  cloud::NodePool created = *f.Compute().targets[0].actions[0].node_pool;
  f.Create(created);
  LivePool(f.live, created.name).status = "ERROR";
  const TargetPlan tp = f.Compute().targets[0];
  // The ERROR pool goes first (deletes lead the lane), then the old pool is
  // replaced again under the same deterministic name.
  EXPECT_EQ(Steps(tp), (std::vector<std::string>{"delete " + created.name, "replace serve-0"}));
  EXPECT_TRUE(tp.actions[0].superseded_by.empty()) << "its slot is not filled by a kept pool";
  EXPECT_EQ(tp.actions[1].node_pool->name, created.name);
}

TEST(CreateBeforeDeleteTest, RepairOfABrokenReplacementTakesTheSlotName) {
  Fixture f;
  cloud::NodePool created = *f.Compute().targets[0].actions[0].node_pool;
  f.Create(created);
  f.Delete("serve-0");
  LivePool(f.live, created.name).status = "ERROR";
  const TargetPlan tp = f.Compute().targets[0];
  ASSERT_EQ(Steps(tp), std::vector<std::string>{"replace " + created.name});
  EXPECT_EQ(tp.actions[0].node_pool->name, "serve-0") << "its own name is taken by the broken pool";
}

TEST(CreateBeforeDeleteTest, ReplacementOfARemovedSliceIsDeletedLikeTheSlice) {
  Fixture f;
  f.target.pools[0] = MakePool("serve", "v6e", "1x1", 2);
  cloud::NodePool created = *f.Compute().targets[0].actions[0].node_pool;
  f.Create(created);
  f.Delete("serve-0");
  f.target.pools[0] = MakePool("other", "v6e", "1x1");
  f.target.policy.max_delete_percent = 100;
  const TargetPlan tp = f.Compute().targets[0];
  EXPECT_EQ(Steps(tp), (std::vector<std::string>{"delete " + created.name, "create other-0"}));
  EXPECT_EQ(tp.actions[0].reason, "no longer declared");
}

TEST(CreateBeforeDeleteTest, AbandonRemovesTheSlotLabelToo) {
  Fixture f;
  cloud::NodePool created = *f.Compute().targets[0].actions[0].node_pool;
  (*created.resource_labels)[kDeletionPolicyLabel] = "abandon";
  f.Create(created);
  f.Delete("serve-0");
  f.target.pools.clear();
  const TargetPlan tp = f.Compute().targets[0];
  ASSERT_EQ(Steps(tp), std::vector<std::string>{"update " + created.name});
  EXPECT_FALSE(tp.actions[0].node_pool->resource_labels->count(kSlotLabel));
}

}  // namespace
}  // namespace tpu::plan
