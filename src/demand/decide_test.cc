// Decide as tables: policy refusals, the chip limits, ERROR collection, grace
// periods across JobSet restarts and deletions, what a restart of the daemon
// sees, and the pools the GKE TPU Provisioner left behind.
#include "demand/decide.h"

#include <gtest/gtest.h>

#include "demand/test_util.h"

namespace tpu::demand {
namespace {

using namespace testing;  // the module's test helpers (test_util.h)

using std::chrono::minutes;
using std::chrono::seconds;

// A live demand-driven pool of `jobset`'s job `key`.
cloud::NodePool LivePool(const std::string& jobset, const std::string& key, const std::string& status,
                         int nodes = 4, const std::string& ns = "ml") {
  auto s = BuildSlice(Policy(), kCluster, Leader(jobset, key, "tpu-v6e-slice", "4x4", 4, ns));
  cloud::NodePool p = s->pool;
  p.node_count = nodes;
  p.status = status;
  return p;
}

JobSetState Js(const std::string& name, bool finished = false, TimePoint at = {}) {
  JobSetState s;
  s.ns = "ml";
  s.name = name;
  s.finished = finished;
  s.outcome = finished ? "completed" : "";
  s.finished_at = at;
  return s;
}

DemandInputs Inputs(const manifest::DemandPolicy* policy) {
  DemandInputs in;
  in.policy = policy;
  in.cluster = kCluster;
  in.jobsets_synced = true;
  in.now = TimePoint(seconds(1'800'000'000));
  return in;
}

std::vector<std::string> Summary(const Decision& d) {
  std::vector<std::string> out;
  for (const auto& a : d.actions)
    out.push_back(std::string(plan::ActionKindName(a.kind)) + " " + a.resource.name);
  return out;
}

const std::string kKey2 = "fedcba9876543210fedcba9876543210fedcba98";

TEST(DecideTest, TwoSliceJobSetGetsTwoPools) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.jobsets["ml/train"] = Js("train");
  in.leaders = {Leader("train", kKey, "tpu-v6e-slice", "4x4", 4), Leader("train", kKey2, "tpu-v6e-slice", "4x4", 4)};
  Decision d = Decide(in);
  EXPECT_EQ(Summary(d), (std::vector<std::string>{"create train-0123456789ab", "create train-fedcba987654"}));
  for (const auto& a : d.actions) {
    EXPECT_EQ(a.target, "proj/c1 (demand)");
    EXPECT_EQ(a.resource.Id(), "nodePool:proj/us-east5-b/c1/" + a.resource.name);
    EXPECT_EQ(a.blast.chips_created, 16);
    ASSERT_TRUE(a.node_pool);
  }
  EXPECT_TRUE(d.refusals.empty());
  EXPECT_EQ(d.chips_in_use, 32);
}

TEST(DecideTest, NoCreateWhenThePoolExistsOrItsOperationRuns) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.jobsets["ml/train"] = Js("train");
  in.leaders = {Leader("train", kKey, "tpu-v6e-slice", "4x4", 4), Leader("train", kKey2, "tpu-v6e-slice", "4x4", 4)};
  in.live_pools = {LivePool("train", kKey, "PROVISIONING")};
  in.busy_pools = {PoolName("train", kKey2)};  // a create a killed daemon started
  EXPECT_EQ(Summary(Decide(in)), std::vector<std::string>{});
}

TEST(DecideTest, ChipLimitsRefuseWithAReason) {
  auto policy = Policy();
  policy.max_chips = 60;
  policy.max_chips_per_namespace = 16;
  auto in = Inputs(&policy);
  in.jobsets["ml/train"] = Js("train");
  in.live_pools = {LivePool("other", kKey2, "RUNNING", 4, "team-b")};  // 16 chips in team-b
  in.leaders = {Leader("train", kKey, "tpu-v6e-slice", "4x4", 4),
                Leader("train", "aaaa" + kKey.substr(4), "tpu-v6e-slice", "4x4", 4),
                Leader("big", kKey, "tpu-v6e-slice", "4x8", 4, "team-c")};
  Decision d = Decide(in);
  EXPECT_EQ(Summary(d), std::vector<std::string>{"create train-0123456789ab"});
  ASSERT_EQ(d.refusals.size(), 2u);
  std::map<std::string, std::string> why;
  for (const auto& r : d.refusals) why[r.pod.jobset + "/" + r.pod.job_key.substr(0, 4)] = r.reason;
  EXPECT_NE(why["big/0123"].find("to 64 chips, over Cluster spec.demand.maxChips 60"), std::string::npos) << why["big/0123"];
  EXPECT_NE(why["train/aaaa"].find("namespace ml to 32 chips, over Cluster spec.demand.maxChipsPerNamespace 16"),
            std::string::npos)
      << why["train/aaaa"];
}

TEST(DecideTest, DisabledNoPolicyAndOptOut) {
  auto off = Policy();
  off.enabled = false;
  auto in = Inputs(&off);
  in.leaders = {Leader("train", kKey, "tpu-v6e-slice", "4x4", 4)};
  Decision d = Decide(in);
  EXPECT_TRUE(d.actions.empty());
  ASSERT_EQ(d.refusals.size(), 1u);
  EXPECT_NE(d.refusals[0].reason.find("disabled"), std::string::npos);

  auto none = Inputs(nullptr);
  none.leaders = in.leaders;
  d = Decide(none);
  EXPECT_TRUE(d.actions.empty());
  EXPECT_TRUE(d.refusals.empty()) << "a cluster without spec.demand says nothing";

  auto policy = Policy();
  auto opt = Inputs(&policy);
  opt.leaders = in.leaders;
  opt.leaders[0].opted_out = true;
  d = Decide(opt);
  EXPECT_TRUE(d.actions.empty());
  EXPECT_TRUE(d.refusals.empty());
}

TEST(DecideTest, ErrorPoolIsCollectedThenRecreated) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.jobsets["ml/train"] = Js("train");
  in.leaders = {Leader("train", kKey, "tpu-v6e-slice", "4x4", 4)};
  in.live_pools = {LivePool("train", kKey, "ERROR")};
  Decision d = Decide(in);
  EXPECT_EQ(Summary(d), std::vector<std::string>{"delete train-0123456789ab"});
  EXPECT_NE(d.actions[0].reason.find("ERROR"), std::string::npos);
  in.live_pools.clear();  // the next pass, after the delete
  EXPECT_EQ(Summary(Decide(in)), std::vector<std::string>{"create train-0123456789ab"});
  in.retry_after[PoolName("train", kKey)] = in.now + seconds(30);  // after a stockout
  d = Decide(in);
  EXPECT_TRUE(d.actions.empty());
  EXPECT_EQ(d.next_due, in.now + seconds(30));
}

TEST(DecideTest, GracePeriodFromTheJobSetsConditionTime) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.live_pools = {LivePool("train", kKey, "RUNNING"), LivePool("train", kKey2, "RUNNING")};
  in.jobsets["ml/train"] = Js("train", true, in.now - minutes(2));
  Decision d = Decide(in);
  EXPECT_TRUE(d.actions.empty());
  EXPECT_EQ(d.next_due, in.now + minutes(3));
  in.jobsets["ml/train"] = Js("train", true, in.now - minutes(5));
  d = Decide(in);
  EXPECT_EQ(Summary(d), (std::vector<std::string>{"delete train-0123456789ab", "delete train-fedcba987654"}));
  EXPECT_NE(d.actions[0].reason.find("completed (grace period 5m over)"), std::string::npos) << d.actions[0].reason;
  EXPECT_EQ(d.actions[0].blast.chips_destroyed, 16);
}

TEST(DecideTest, RestartingJobSetKeepsItsPools) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.live_pools = {LivePool("train", kKey, "RUNNING")};
  JobSetState restarting = Js("train");
  restarting.restarts = 3;
  in.jobsets["ml/train"] = restarting;
  // The restarted Job's leader waits again, with the same job key: same pool.
  in.leaders = {Leader("train", kKey, "tpu-v6e-slice", "4x4", 4)};
  in.gone_since[PoolName("train", kKey)] = in.now - minutes(60);  // seen gone once, back now
  Decision d = Decide(in);
  EXPECT_TRUE(d.actions.empty());
  EXPECT_TRUE(d.gone_since.empty()) << "the JobSet is back: the clock starts over";
}

TEST(DecideTest, DeletedJobSetCountsFromWhenItWasFirstSeenGone) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.live_pools = {LivePool("train", kKey, "RUNNING")};
  Decision d = Decide(in);  // no JobSet at all
  EXPECT_TRUE(d.actions.empty());
  ASSERT_EQ(d.gone_since.size(), 1u);
  EXPECT_EQ(d.gone_since.begin()->second, in.now);
  in.gone_since = d.gone_since;
  in.now += minutes(5);
  d = Decide(in);
  EXPECT_EQ(Summary(d), std::vector<std::string>{"delete train-0123456789ab"});
  EXPECT_NE(d.actions[0].reason.find("deleted"), std::string::npos);
}

TEST(DecideTest, NothingIsDeletedBeforeTheJobSetListIsRead) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.jobsets_synced = false;
  in.live_pools = {LivePool("train", kKey, "RUNNING")};
  in.gone_since[PoolName("train", kKey)] = in.now - minutes(60);
  EXPECT_TRUE(Decide(in).actions.empty());
}

TEST(DecideTest, GitOwnedAndForeignPoolsAreNotTouched) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  cloud::NodePool git;
  git.name = "train-0";
  git.status = "ERROR";
  git.resource_labels = cloud::StringMap{{cloud::kManagedLabel, "true"}};
  cloud::NodePool other;
  other.name = "default-pool";
  other.status = "RUNNING";
  in.live_pools = {git, other};
  Decision d = Decide(in);
  EXPECT_TRUE(d.actions.empty());
  EXPECT_TRUE(d.pools.empty());
}

TEST(DecideTest, DeletesComeBeforeCreatesAndFreeTheirChips) {
  auto policy = Policy();
  policy.max_chips = 16;
  auto in = Inputs(&policy);
  in.live_pools = {LivePool("old", kKey, "RUNNING")};
  in.jobsets["ml/old"] = Js("old", true, in.now - minutes(10));
  in.jobsets["ml/train"] = Js("train");
  in.leaders = {Leader("train", kKey2, "tpu-v6e-slice", "4x4", 4)};
  EXPECT_EQ(Summary(Decide(in)),
            (std::vector<std::string>{"delete old-0123456789ab", "create train-fedcba987654"}));
}

TEST(DecideTest, V7xGetsItsWorkloadPolicyFirstAndLosesItAfter) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.jobsets["ml/train"] = Js("train");
  in.leaders = {Leader("train", kKey, "tpu7x", "2x2x4", 4)};
  Decision d = Decide(in);
  ASSERT_EQ(d.actions.size(), 2u);
  EXPECT_EQ(d.actions[0].resource.kind, plan::ResourceKind::kWorkloadPolicy);
  EXPECT_EQ(d.actions[0].resource.location, "us-east5");
  EXPECT_EQ(d.actions[1].depends_on, std::vector<std::string>{d.actions[0].resource.Id()});

  cloud::NodePool live = *d.actions[1].node_pool;
  live.status = "RUNNING";
  cloud::WorkloadPolicy wp = *d.actions[0].workload_policy;
  in.live_pools = {live};
  in.live_policies = {wp};
  in.leaders.clear();
  in.jobsets["ml/train"] = Js("train", true, in.now - minutes(6));
  d = Decide(in);
  ASSERT_EQ(Summary(d), (std::vector<std::string>{"delete train-0123456789ab", "delete train-0123456789ab-wp"}));
  EXPECT_EQ(d.actions[1].depends_on, std::vector<std::string>{d.actions[0].resource.Id()});
}

// A pool the GKE TPU Provisioner made: its node labels, its name.
cloud::NodePool OriginalPool(const std::string& jobset, const std::string& key, const std::string& ns,
                             const std::string& status = "RUNNING") {
  cloud::NodePool p;
  p.name = CompatPoolName(jobset, key);
  p.machine_type = "ct6e-standard-4t";
  p.node_count = 4;
  p.status = status;
  p.placement_policy = cloud::PlacementPolicy{"COMPACT", "4x4", ""};
  p.labels = cloud::StringMap{{kCompatManagerLabel, kCompatManagerValue}, {kCompatJobSetLabel, jobset},
                              {kCompatNamespaceLabel, ns},
                              {"google.com/tpu-provisioner-nodepool-hash", "abc"}};
  return p;
}

TEST(DecideTest, PoolsOfTheOriginalAreAdoptedReusedAndCollected) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.jobsets["ml/train"] = Js("train");
  in.leaders = {Leader("train", kKey, "tpu-v6e-slice", "4x4", 4)};
  cloud::NodePool gone = OriginalPool("old", kKey2, "ml");
  cloud::NodePool older = OriginalPool("older", kKey2, "");
  older.labels = cloud::StringMap{{kCompatManagerLabel, kCompatManagerValue}, {kCompatNodepoolIdLabel, "older"}};
  cloud::NodePool foreign = OriginalPool("mine", kKey2, "ml");
  foreign.labels.reset();
  in.live_pools = {OriginalPool("train", kKey, "ml"), gone, older, foreign};
  EXPECT_EQ(CompatPoolName("train", kKey), "train-01234");
  EXPECT_EQ(CompatPoolName(std::string(40, 'j'), kKey), std::string(34, 'j') + "-01234");
  auto owner = WorkloadOwner(older);
  ASSERT_TRUE(owner);
  EXPECT_EQ(owner->Key(), "default/older") << "the original's default namespace";
  EXPECT_FALSE(WorkloadOwner(foreign));

  Decision d = Decide(in);
  EXPECT_TRUE(d.actions.empty()) << "the leader's pool is the original's train-01234; the others wait out the grace";
  EXPECT_TRUE(d.refusals.empty());
  EXPECT_EQ(d.pools.size(), 3u);
  EXPECT_EQ(d.chips_in_use, 48) << "pools in their grace period still count";
  in.gone_since = d.gone_since;
  in.now += minutes(6);
  d = Decide(in);
  EXPECT_EQ(Summary(d), (std::vector<std::string>{"delete old-fedcb", "delete older-fedcb"}));
}

TEST(DecideTest, AChangedJobSetGetsItsPoolReplacedOnceTheOldOneIsGone) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  auto old_leader = Leader("train", kKey, "tpu-v6e-slice", "2x4", 4);
  old_leader.jobset_uid = "uid-1";
  cloud::NodePool old_pool = BuildSlice(policy, kCluster, old_leader)->pool;
  old_pool.status = "RUNNING";
  in.live_pools = {old_pool};
  auto leader = Leader("train", kKey, "tpu-v6e-slice", "4x4", 4);
  leader.jobset_uid = "uid-2";
  in.leaders = {leader};
  auto js = Js("train");
  js.uid = "uid-2";
  in.jobsets["ml/train"] = js;
  // The old JobSet's pods are still there: wait, and say so.
  in.live_jobset_uids = {"uid-2", "uid-1"};
  Decision d = Decide(in);
  EXPECT_TRUE(d.actions.empty());
  ASSERT_EQ(d.refusals.size(), 1u);
  EXPECT_EQ(d.refusals[0].event_reason, "TPUProvisioningWaiting");
  EXPECT_NE(d.refusals[0].reason.find("uid uid-1"), std::string::npos) << d.refusals[0].reason;
  // Gone: the pool is deleted now (no grace: its JobSet is not coming back) …
  in.live_jobset_uids = {"uid-2"};
  d = Decide(in);
  EXPECT_EQ(Summary(d), std::vector<std::string>{"delete train-0123456789ab"});
  ASSERT_EQ(d.refusals.size(), 1u);
  EXPECT_EQ(d.refusals[0].event_reason, "TPUNodePoolReplaced");
  EXPECT_NE(d.refusals[0].reason.find("ct6e-standard-4t ×2 2x4 → ct6e-standard-4t ×4 4x4"), std::string::npos)
      << d.refusals[0].reason;
  // … and while it stops, the leader waits with an Event; once gone, the create.
  in.live_pools[0].status = "STOPPING";
  d = Decide(in);
  EXPECT_TRUE(d.actions.empty());
  ASSERT_EQ(d.refusals.size(), 1u);
  EXPECT_EQ(d.refusals[0].event_reason, "TPUProvisioningWaiting");
  in.live_pools.clear();
  d = Decide(in);
  EXPECT_EQ(Summary(d), std::vector<std::string>{"create train-0123456789ab"});
  EXPECT_EQ(d.actions[0].node_pool->resource_labels->at(kPoolJobSetUidLabel), "uid-2");
  // The same shape under a new UID reuses the pool: nothing to replace.
  in.live_pools = {old_pool};
  in.leaders[0] = old_leader;
  in.leaders[0].jobset_uid = "uid-2";
  d = Decide(in);
  EXPECT_TRUE(d.actions.empty());
  EXPECT_TRUE(d.refusals.empty());
}

TEST(DecideTest, V7xUsesAPreCreatedWorkloadPolicyWhenThereIsOne) {
  auto policy = Policy();
  auto in = Inputs(&policy);
  in.jobsets["ml/train"] = Js("train");
  in.leaders = {Leader("train", kKey, "tpu7x", "2x2x4", 4)};
  Decision d = Decide(in);
  EXPECT_EQ(Summary(d), (std::vector<std::string>{"create train-0123456789ab-wp", "create train-0123456789ab"}));
  cloud::WorkloadPolicy pre;
  pre.name = "tpu-provisioner-2x2x4";
  pre.region = "us-east5";
  pre.type = "HIGH_THROUGHPUT";
  pre.accelerator_topology = "2x2x4";
  in.live_policies = {pre};
  d = Decide(in);
  EXPECT_EQ(Summary(d), std::vector<std::string>{"create train-0123456789ab"});
  EXPECT_EQ(d.actions[0].node_pool->placement_policy->policy_name, "tpu-provisioner-2x2x4");
  EXPECT_TRUE(d.actions[0].depends_on.empty());
  // Its pool's delete leaves the shared policy alone.
  cloud::NodePool live = *d.actions[0].node_pool;
  live.status = "RUNNING";
  in.live_pools = {live};
  in.leaders.clear();
  in.jobsets.clear();
  in.now += minutes(10);
  d = Decide(in);
  in.gone_since = d.gone_since;
  in.now += minutes(10);
  d = Decide(in);
  EXPECT_EQ(Summary(d), std::vector<std::string>{"delete train-0123456789ab"});
}

}  // namespace
}  // namespace tpu::demand
