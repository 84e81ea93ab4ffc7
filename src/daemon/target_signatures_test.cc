// TargetSignatures: the signatures taken from an incremental load's listings
// are the ones a fresh walk of the tree gives, and a one-file change marks its
// target alone.
#include "daemon/target_signatures.h"

#include <gtest/gtest.h>

#include "manifest/disk_tree.h"
#include "manifest/fake_tree.h"
#include "manifest/loader.h"

namespace tpu::daemon {
namespace {

TEST(TargetSignaturesTest, FromAnIncrementalLoadTheyAreTheWalksOwn) {
  manifest::FakeTree tree;
  tree.Write("deploy/p/a/pools.yaml", "x: 1\n");
  tree.Write("deploy/p/b/pools.yaml", "x: 2\n");
  tree.Write("deploy/p/b/nested/more.yaml", "x: 3\n");  // a subdirectory: walked
  tree.Write("deploy/p/README", "hi\n");
  manifest::ParseCache cache;
  manifest::LoadRepoIncremental(tree, {}, &cache);
  TreeSignatures before = ComputeSignatures(tree, cache);
  EXPECT_EQ(before.targets, ComputeSignatures(tree).targets);
  EXPECT_EQ(before.outside, ComputeSignatures(tree).outside);

  tree.Write("deploy/p/a/pools.yaml", "x: 10\n");
  manifest::LoadRepoIncremental(tree, {}, &cache);
  TreeSignatures after = ComputeSignatures(tree, cache);
  EXPECT_EQ(after.targets, ComputeSignatures(tree).targets);
  EXPECT_EQ(ChangedTargets(before, after), std::set<std::string>{"p/a"});

  tree.Write("deploy/p/b/nested/more.yaml", "x: 30\n");
  manifest::LoadRepoIncremental(tree, {}, &cache);
  EXPECT_EQ(ChangedTargets(after, ComputeSignatures(tree, cache)), std::set<std::string>{"p/b"});
}

}  // namespace
}  // namespace tpu::daemon
