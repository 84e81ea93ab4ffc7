// LoadRepo over a FakeTree: typed values with defaults and catalog-derived
// shapes, target assembly across files, and the ParseCache's re-parse counts.
#include "manifest/loader.h"

#include <gtest/gtest.h>

#include "manifest/fake_tree.h"
#include "manifest/disk_tree.h"

namespace tpu::manifest {
namespace {

const char kPool[] = R"(apiVersion: tpu-provisioner.io/v1alpha1
kind: TPUNodePool
metadata:
  name: NAME
spec:
  accelerator: v5e
  topology: 4x8
)";

std::string Pool(const std::string& name) {
  std::string s = kPool;
  s.replace(s.find("NAME"), 4, name);
  return s;
}

std::vector<std::string> ErrorLines(const Repo& repo) {
  std::vector<std::string> out;
  for (const auto& e : repo.AllErrors()) out.push_back(e.ToString());
  return out;
}

TEST(LoaderTest, DerivesShapeAndDefaults) {
  FakeTree tree;
  tree.Write("deploy/my-project/c1/pools.yaml", Pool("train"));
  Repo repo = LoadRepo(tree);
  ASSERT_EQ(ErrorLines(repo), std::vector<std::string>{});
  ASSERT_EQ(repo.targets.size(), 1u);
  const Target& t = repo.targets[0];
  EXPECT_EQ(t.Key(), "my-project/c1");
  EXPECT_EQ(t.dir, "deploy/my-project/c1");
  EXPECT_FALSE(t.policy.declared);
  EXPECT_TRUE(t.policy.prune);
  EXPECT_EQ(t.policy.max_delete_percent, 50);
  ASSERT_EQ(t.pools.size(), 1u);
  const TPUNodePool& p = t.pools[0];
  EXPECT_EQ(p.accelerator, "tpu-v5-lite-podslice");
  EXPECT_EQ(p.shape.machine_type.name, "ct5lp-hightpu-4t");
  EXPECT_EQ(p.node_count, 8);
  EXPECT_TRUE(p.shape.multi_host);
  EXPECT_EQ(p.slices, 1);
  EXPECT_EQ(p.capacity.type, CapacityType::kOnDemand);
  EXPECT_FALSE(p.management) << "left out: GKE's defaults, nothing sent";
  EXPECT_FALSE(p.autoscaled());
  EXPECT_EQ(p.where.file, "deploy/my-project/c1/pools.yaml");
  EXPECT_EQ(p.where.line, 2);
  EXPECT_EQ(p.PoolName(0), "train-0");
}

TEST(LoaderTest, TakesPoolLocationFromAZonalCluster) {
  FakeTree tree;
  tree.Write("deploy/my-project/c1/cluster.yaml",
             "apiVersion: tpu-provisioner.io/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\n"
             "spec: {location: us-west4-a, maxDeletePercent: 10, replaceStrategy: CreateBeforeDelete}\n");
  tree.Write("deploy/my-project/c1/pools.yaml", Pool("a") + "---\n" + Pool("b") + "  location: us-west4-b\n");
  Repo repo = LoadRepo(tree);
  ASSERT_EQ(ErrorLines(repo), std::vector<std::string>{});
  const Target& t = repo.targets[0];
  EXPECT_TRUE(t.policy.declared);
  EXPECT_EQ(t.policy.max_delete_percent, 10);
  EXPECT_EQ(t.policy.replace_strategy, ReplaceStrategy::kCreateBeforeDelete);
  EXPECT_EQ(t.policy.where.file, "deploy/my-project/c1/cluster.yaml");
  ASSERT_EQ(t.pools.size(), 2u);
  EXPECT_EQ(t.pools[0].location, "us-west4-a");
  EXPECT_EQ(t.pools[1].location, "us-west4-b");
}

// A multi-host slice's autoscaling is the whole slice, 0 ↔ its VMs; flex-start
// pools get that sizing without asking; management keeps where autoUpgrade is.
TEST(LoaderTest, AutoscaledSlicesFlexStartAndManagement) {
  FakeTree tree;
  tree.Write("deploy/my-project/c1/pools.yaml",
             Pool("zero") + "  autoscaling: {}\n---\n" +
                 Pool("flex") + "  capacity: {type: flexStart}\n---\n" +
                 Pool("managed") + "  management:\n    autoRepair: false\n    autoUpgrade: false\n");
  Repo repo = LoadRepo(tree);
  ASSERT_EQ(ErrorLines(repo), std::vector<std::string>{});
  const auto& pools = repo.targets[0].pools;
  ASSERT_EQ(pools.size(), 3u);
  ASSERT_TRUE(pools[0].autoscaled());
  EXPECT_EQ(pools[0].autoscaling->min_node_count, 0);
  EXPECT_EQ(pools[0].autoscaling->max_node_count, 8) << "a 4x8 slice of ct5lp-hightpu-4t has 8 VMs";
  EXPECT_EQ(pools[0].node_count, 8) << "what it may scale to: possible capacity";
  ASSERT_TRUE(pools[1].autoscaled());
  EXPECT_EQ(pools[1].autoscaling->max_node_count, 8);
  EXPECT_FALSE(pools[1].management) << "auto-repair off is the planner's to send";
  ASSERT_TRUE(pools[2].management);
  EXPECT_EQ(pools[2].management->auto_repair, false);
  EXPECT_EQ(pools[2].management->auto_upgrade, false);
  EXPECT_EQ(pools[2].management->auto_upgrade_at.file, "deploy/my-project/c1/pools.yaml");
  EXPECT_EQ(pools[2].management->auto_upgrade_at.line, 28);
  EXPECT_EQ(pools[2].management->auto_upgrade_at.column, 5);
}

TEST(LoaderTest, ReportsEveryErrorAndBlocksOnlyBrokenTargets) {
  FakeTree tree;
  tree.Write("deploy/my-project/good/pools.yaml", Pool("fine"));
  tree.Write("deploy/my-project/bad/a.yaml", Pool("dup") + "  slices: zero\n");
  tree.Write("deploy/my-project/bad/b.yaml", Pool("dup"));
  Repo repo = LoadRepo(tree);
  EXPECT_EQ(ErrorLines(repo),
            (std::vector<std::string>{
                "deploy/my-project/bad/a.yaml:8:3: spec.slices: expected an integer, got string \"zero\"",
                "deploy/my-project/bad/b.yaml:4:9: metadata.name: duplicate TPUNodePool \"dup\" in "
                "deploy/my-project/bad (first declared at deploy/my-project/bad/a.yaml:4:9)"}));
  ASSERT_EQ(repo.targets.size(), 2u);
  EXPECT_TRUE(repo.targets[0].blocked());   // my-project/bad
  EXPECT_FALSE(repo.targets[1].blocked());  // my-project/good
}

TEST(LoaderTest, CacheReparsesOnlyChangedFiles) {
  FakeTree tree;
  for (int i = 0; i < 5; ++i) tree.Write("deploy/my-project/c1/p" + std::to_string(i) + ".yaml", Pool("p" + std::to_string(i)));
  ParseCache cache;
  LoadRepo(tree, {}, &cache);
  EXPECT_EQ(cache.parses(), 5u);
  EXPECT_EQ(cache.last_load_parses(), 5u);

  tree.reads.clear();
  Repo again = LoadRepo(tree, {}, &cache);
  EXPECT_EQ(cache.last_load_parses(), 0u);
  EXPECT_TRUE(tree.reads.empty());
  EXPECT_EQ(again.targets[0].pools.size(), 5u);

  tree.Write("deploy/my-project/c1/p3.yaml", Pool("p3") + "  slices: 2\n");
  tree.reads.clear();
  Repo changed = LoadRepo(tree, {}, &cache);
  EXPECT_EQ(cache.last_load_parses(), 1u);
  EXPECT_EQ(tree.reads, std::vector<std::string>{"deploy/my-project/c1/p3.yaml"});
  EXPECT_EQ(changed.targets[0].pools[3].slices, 2);
  EXPECT_EQ(cache.parses(), 6u);
  EXPECT_EQ(cache.size(), 5u);  // the old p3 entry was dropped
}

TEST(LoaderTest, CacheHitStillChecksTheNewPath) {
  FakeTree tree;
  tree.Write("deploy/my-project/c1/p.yaml", Pool("p") + "  cluster: c1\n");
  ParseCache cache;
  ASSERT_TRUE(LoadRepo(tree, {}, &cache).AllErrors().empty());
  tree.Remove("deploy/my-project/c1/p.yaml");
  tree.Write("deploy/my-project/c2/p.yaml", Pool("p") + "  cluster: c1\n");  // moved, same bytes
  Repo repo = LoadRepo(tree, {}, &cache);
  EXPECT_EQ(cache.last_load_parses(), 0u);
  EXPECT_EQ(ErrorLines(repo),
            std::vector<std::string>{"deploy/my-project/c2/p.yaml:8:12: spec.cluster: \"c1\" contradicts the "
                                     "directory deploy/my-project/c2/ (expected \"c2\"; a manifest's target is its "
                                     "directory)"});
}

TEST(LoaderTest, NeverReadsOversizedFilesOrLinks) {
  FakeTree tree;
  tree.Write("deploy/my-project/c1/big.yaml", std::string((1 << 20) + 1, '#'));
  tree.Link("deploy/my-project/c1/secret.yaml", "/etc/shadow");
  Repo repo = LoadRepo(tree);
  EXPECT_TRUE(tree.reads.empty());
  EXPECT_EQ(ErrorLines(repo),
            (std::vector<std::string>{
                "deploy/my-project/c1/big.yaml: file is 1048577 bytes; expected at most 1048576 (not read)",
                "deploy/my-project/c1/secret.yaml: symbolic link to \"/etc/shadow\" leaves the repository or points "
                "nowhere; not followed"}));
}

TEST(LoaderTest, ExampleProjectIsValid) {
  auto tree = DiskTree::Open(std::string(TPU_SOURCE_DIR) + "/example-project");
  ASSERT_TRUE(tree.ok());
  Repo repo = LoadRepo(**tree);
  EXPECT_EQ(ErrorLines(repo), std::vector<std::string>{});
  ASSERT_EQ(repo.targets.size(), 3u);
  const Target& train = repo.targets[0];
  EXPECT_EQ(train.Key(), "ml-research-prod/train-central1");
  EXPECT_EQ(train.policy.kueue->cluster_queue, "tpu-training");
  std::map<std::string, const TPUNodePool*> pools;
  for (const auto& p : train.pools) pools[p.name] = &p;
  ASSERT_EQ(pools.size(), 7u);
  EXPECT_EQ(pools["v5e-4x8"]->node_count, 8);
  EXPECT_TRUE(pools["v5e-4x8"]->annotations.prevent_destroy);
  EXPECT_EQ(pools["v5e-scratch"]->shape.machine_type.name, "ct5lp-hightpu-8t");
  EXPECT_EQ(pools["v5e-scratch"]->node_count, 2);
  EXPECT_TRUE(pools["v5e-scratch"]->node_count_set);
  EXPECT_EQ(pools["v5e-scratch"]->autoscaling->max_node_count, 6);
  EXPECT_EQ(pools["v6e-spot"]->capacity.type, CapacityType::kSpot);
  EXPECT_EQ(pools["v6e-reserved"]->capacity.reservation, "v6e-256-central1b");
  EXPECT_TRUE(pools["v6e-reserved"]->annotations.abandon);
  EXPECT_EQ(pools["v6e-reserved"]->node_count, 64);
  ASSERT_EQ(pools["v6e-burst"]->ladder.size(), 3u);
  EXPECT_EQ(pools["v6e-burst"]->ladder[0].reservation_project, "ml-capacity-shared");
  EXPECT_EQ(pools["v6e-burst"]->ladder[2].type, CapacityType::kSpot);
  EXPECT_EQ(pools["v6e-burst"]->capacity, pools["v6e-burst"]->ladder[0]);
  EXPECT_EQ(pools["v5p-multislice"]->slices, 4);
  EXPECT_EQ(pools["v5p-multislice"]->node_count, 4);
  EXPECT_EQ(pools["v7x-4x4x4"]->shape.placement, catalog::Placement::kWorkloadPolicy);
  EXPECT_EQ(pools["v7x-4x4x4"]->workload_policy, "v7x-4x4x4-policy");
  const Target& gce = repo.targets[1];
  EXPECT_EQ(gce.Key(), "ml-serving-dev/gce-tpu7x");
  ASSERT_EQ(gce.groups.size(), 1u);
  EXPECT_EQ(gce.groups[0].shape->vms, 2);
  EXPECT_EQ(gce.groups[0].target_size_policy_mode, TargetSizePolicyMode::kBulk);
  EXPECT_EQ(gce.groups[0].instance_config->provisioning_model, ProvisioningModel::kReservationBound);
  const Target& serve = repo.targets[2];
  EXPECT_EQ(serve.pools[0].location, "us-west4-a");
}

}  // namespace
}  // namespace tpu::manifest

namespace tpu::manifest {
namespace {

// A FakeTree that, like a git tree, gives directories an id (here a digest of
// everything below them) and records which directories were listed.
class DirIdTree : public FakeTree {
 public:
  Result<std::vector<TreeEntry>> List(const std::string& dir) const override {
    lists.push_back(dir);
    return ListWithIds(dir);
  }
  mutable std::vector<std::string> lists;

 private:
  Result<std::vector<TreeEntry>> ListWithIds(const std::string& dir) const {
    auto entries = FakeTree::List(dir);
    if (!entries.ok()) return entries;
    for (auto& e : *entries) {
      if (e.kind != TreeEntry::Kind::kDirectory) continue;
      std::string below;
      const std::string path = dir.empty() ? e.name : dir + "/" + e.name;
      auto sub = ListWithIds(path);
      for (const auto& s : *sub) below += s.name + ":" + s.id + "\n";
      e.id = GitBlobId(below);
    }
    return entries;
  }
};

std::string Key(const Target& t) { return t.Key(); }

TEST(LoaderIncrementalTest, SameResultAsAFullLoadAndOnlyTheChangedTargetRebuilt) {
  FakeTree tree;
  for (const char* c : {"c1", "c2", "c3"})
    for (int i = 0; i < 3; ++i)
      tree.Write(std::string("deploy/my-project/") + c + "/p" + std::to_string(i) + ".yaml",
                 Pool(std::string(c) + "-p" + std::to_string(i)));
  tree.Write("deploy/my-project/c2/bad.yaml", "kind: [\n");  // a blocked target is carried over too
  ParseCache cache;
  const Repo& first = LoadRepoIncremental(tree, {}, &cache);
  ASSERT_EQ(first.targets.size(), 3u);
  EXPECT_EQ(cache.last_load_parses(), 10u);
  EXPECT_EQ(ErrorLines(first), ErrorLines(LoadRepo(tree)));

  tree.reads.clear();
  const Repo& again = LoadRepoIncremental(tree, {}, &cache);
  EXPECT_EQ(cache.last_load_parses(), 0u);
  EXPECT_TRUE(tree.reads.empty());
  ASSERT_EQ(again.targets.size(), 3u);
  EXPECT_EQ(again.targets[0].pools.size(), 3u);
  EXPECT_TRUE(again.targets[1].blocked());
  EXPECT_EQ(cache.size(), 10u);  // carried-over targets keep their files cached

  tree.Write("deploy/my-project/c3/p1.yaml", Pool("c3-p1") + "  slices: 2\n");
  tree.Write("deploy/my-project/c4/p.yaml", Pool("c4-p"));
  tree.reads.clear();
  const Repo& changed = LoadRepoIncremental(tree, {}, &cache);
  EXPECT_EQ(cache.last_load_parses(), 2u);
  EXPECT_EQ(tree.reads, (std::vector<std::string>{"deploy/my-project/c3/p1.yaml", "deploy/my-project/c4/p.yaml"}));
  Repo full = LoadRepo(tree);
  ASSERT_EQ(changed.targets.size(), full.targets.size());
  for (size_t i = 0; i < full.targets.size(); ++i) {
    EXPECT_EQ(Key(changed.targets[i]), Key(full.targets[i]));
    EXPECT_EQ(changed.targets[i].pools.size(), full.targets[i].pools.size());
    EXPECT_EQ(changed.targets[i].errors.size(), full.targets[i].errors.size());
  }
  EXPECT_EQ(changed.targets[2].pools[1].slices, 2);
  EXPECT_EQ(ErrorLines(changed), ErrorLines(full));

  tree.Remove("deploy/my-project/c1/p0.yaml");
  tree.Remove("deploy/my-project/c1/p1.yaml");
  tree.Remove("deploy/my-project/c1/p2.yaml");
  tree.Write("deploy/my-project/c1/README", "gone\n");
  const Repo& removed = LoadRepoIncremental(tree, {}, &cache);
  ASSERT_EQ(removed.targets.size(), 4u);
  EXPECT_TRUE(removed.targets[0].pools.empty());
  EXPECT_EQ(cache.FindListing("deploy/my-project/c1")->signature.find("p0.yaml"), std::string::npos);
}

TEST(LoaderIncrementalTest, UnchangedDirectoryIdsAreNotListedAgain) {
  DirIdTree tree;
  for (const char* c : {"c1", "c2", "c3"})
    tree.Write(std::string("deploy/my-project/") + c + "/p.yaml", Pool(std::string(c) + "-p"));
  ParseCache cache;
  LoadRepoIncremental(tree, {}, &cache);
  tree.Write("deploy/my-project/c2/p.yaml", Pool("c2-p") + "  slices: 3\n");
  tree.lists.clear();
  tree.reads.clear();
  const Repo& repo = LoadRepoIncremental(tree, {}, &cache);
  EXPECT_EQ(cache.last_load_parses(), 1u);
  EXPECT_EQ(tree.lists, (std::vector<std::string>{"deploy", "deploy/my-project", "deploy/my-project/c2"}));
  ASSERT_EQ(repo.targets.size(), 3u);
  EXPECT_EQ(repo.targets[0].pools.size(), 1u);
  EXPECT_EQ(repo.targets[1].pools[0].slices, 3);
  EXPECT_EQ(cache.size(), 3u);  // files of targets carried by id stay cached
  ASSERT_NE(cache.FindListing("deploy/my-project/c1"), nullptr);
  EXPECT_NE(cache.FindListing("deploy/my-project/c1")->signature.find("p.yaml"), std::string::npos);
}

}  // namespace
}  // namespace tpu::manifest
