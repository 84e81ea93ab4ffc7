// DiskTree on a scratch directory: kinds, git blob ids, and symlinks that
// stay in the repo (followed) or leave it (listed, never read).
#include "manifest/disk_tree.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace tpu::manifest {
namespace {

namespace fs = std::filesystem;

class DiskTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/disk_tree_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directories(dir_ / "repo/deploy/p");
    fs::create_directories(dir_ / "outside");
    std::ofstream(dir_ / "repo/deploy/p/a.yaml") << "hello\n";
    std::ofstream(dir_ / "outside/secret.yaml") << "secret\n";
    fs::create_symlink("a.yaml", dir_ / "repo/deploy/p/inside.yaml");
    fs::create_symlink("../../../outside/secret.yaml", dir_ / "repo/deploy/p/escape.yaml");
    fs::create_symlink("missing.yaml", dir_ / "repo/deploy/p/dangling.yaml");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(DiskTreeTest, ListsKindsAndGitBlobIds) {
  auto tree = DiskTree::Open((dir_ / "repo").string());
  ASSERT_TRUE(tree.ok());
  auto root = (*tree)->List("");
  ASSERT_TRUE(root.ok());
  ASSERT_EQ(root->size(), 1u);
  EXPECT_EQ((*root)[0].kind, TreeEntry::Kind::kDirectory);

  auto entries = (*tree)->List("deploy/p");
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 4u);
  const auto& e = *entries;  // sorted: a, dangling, escape, inside
  EXPECT_EQ(e[0].name, "a.yaml");
  EXPECT_EQ(e[0].kind, TreeEntry::Kind::kFile);
  EXPECT_EQ(e[0].size, 6u);
  EXPECT_EQ(e[0].id, "ce013625030ba8dba906f756967f9e9ca394464a");  // git hash-object of "hello\n"
  EXPECT_EQ(e[1].kind, TreeEntry::Kind::kSymlink);
  EXPECT_EQ(e[1].link_target, "missing.yaml");
  EXPECT_EQ(e[2].kind, TreeEntry::Kind::kSymlink);
  EXPECT_EQ(e[2].link_target, "../../../outside/secret.yaml");
  EXPECT_EQ(e[3].kind, TreeEntry::Kind::kFile);  // followed: stays inside
  EXPECT_EQ(e[3].id, e[0].id);
}

TEST_F(DiskTreeTest, ReadsInsideAndRefusesOutside) {
  auto tree = DiskTree::Open((dir_ / "repo").string());
  ASSERT_TRUE(tree.ok());
  EXPECT_EQ(*(*tree)->Read("deploy/p/inside.yaml"), "hello\n");
  auto escape = (*tree)->Read("deploy/p/escape.yaml");
  ASSERT_FALSE(escape.ok());
  EXPECT_EQ(escape.status().message(), "deploy/p/escape.yaml: leaves the repository or does not exist; not read");
  EXPECT_FALSE((*tree)->Read("../outside/secret.yaml").ok());
  EXPECT_EQ((*tree)->List("nope").status().code(), Status::Code::kNotFound);
}

TEST_F(DiskTreeTest, OpenRefusesAMissingDirectory) {
  EXPECT_FALSE(DiskTree::Open((dir_ / "nope").string()).ok());
}

}  // namespace
}  // namespace tpu::manifest
