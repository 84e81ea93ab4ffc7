// GitTree and GitRepo over real repositories made with the git CLI.
#include "source/git_tree.h"

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "manifest/loader.h"
#include "source/git_fixture.h"
#include "source/git_repo.h"

namespace tpu::source {
namespace {

using manifest::TreeEntry;
using ::testing::HasSubstr;
using namespace tpu::source::testing;

class GitTreeTest : public ::testing::Test {
 protected:
  void SetUp() override { InitRepo(dir_.path()); }
  GitRepo Open() {
    Result<GitRepo> r = GitRepo::Open(dir_.str());
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return *r;
  }
  TempDir dir_;
};

TEST_F(GitTreeTest, ListsEntriesWithBlobIdsInNameOrder) {
  WriteFile(dir_.path() / "deploy/p1/c1/pools.yaml", "kind: TPUNodePool\n");
  WriteFile(dir_.path() / "deploy/p1/c1.yaml", "x: 1\n");  // git orders "c1.yaml" before the tree "c1"
  std::string head = CommitAll(dir_.path(), "first");
  GitRepo repo = Open();
  Result<GitTree> tree = repo.Tree(head);
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  EXPECT_EQ(tree->Describe(), "commit " + head.substr(0, 7));
  EXPECT_EQ(tree->commit(), head);

  Result<std::vector<TreeEntry>> root = tree->List("");
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  ASSERT_EQ(root->size(), 1u);
  EXPECT_EQ((*root)[0].name, "deploy");
  EXPECT_EQ((*root)[0].kind, TreeEntry::Kind::kDirectory);

  Result<std::vector<TreeEntry>> p1 = tree->List("deploy/p1");
  ASSERT_TRUE(p1.ok()) << p1.status().ToString();
  ASSERT_EQ(p1->size(), 2u);
  EXPECT_EQ((*p1)[0].name, "c1");
  EXPECT_EQ((*p1)[0].kind, TreeEntry::Kind::kDirectory);
  EXPECT_EQ((*p1)[1].name, "c1.yaml");

  Result<std::vector<TreeEntry>> c1 = tree->List("deploy/p1/c1");
  ASSERT_TRUE(c1.ok());
  ASSERT_EQ(c1->size(), 1u);
  const TreeEntry& file = (*c1)[0];
  EXPECT_EQ(file.kind, TreeEntry::Kind::kFile);
  EXPECT_EQ(file.size, 18u);
  EXPECT_EQ(file.id, Git(dir_.path(), "rev-parse HEAD:deploy/p1/c1/pools.yaml"));

  Result<std::string> bytes = tree->Read("deploy/p1/c1/pools.yaml");
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, "kind: TPUNodePool\n");
}

TEST_F(GitTreeTest, UnchangedFileKeepsItsIdAcrossCommits) {
  WriteFile(dir_.path() / "deploy/p/a/x.yaml", "a\n");
  WriteFile(dir_.path() / "deploy/p/b/y.yaml", "b\n");
  std::string first = CommitAll(dir_.path(), "first");
  WriteFile(dir_.path() / "deploy/p/b/y.yaml", "b2\n");
  std::string second = CommitAll(dir_.path(), "second");
  GitRepo repo = Open();
  auto id_of = [&](const std::string& commit, const std::string& dir) {
    Result<GitTree> t = repo.Tree(commit);
    EXPECT_TRUE(t.ok());
    return (*t->List(dir))[0].id;
  };
  EXPECT_EQ(id_of(first, "deploy/p/a"), id_of(second, "deploy/p/a"));
  EXPECT_NE(id_of(first, "deploy/p/b"), id_of(second, "deploy/p/b"));
}

// A directory's id is its git tree id: unchanged subtree, same id.
TEST_F(GitTreeTest, DirectoryIdIsItsTreeIdAndChangesWithItsContents) {
  WriteFile(dir_.path() / "deploy/p/a/x.yaml", "a\n");
  WriteFile(dir_.path() / "deploy/p/b/y.yaml", "b\n");
  std::string first = CommitAll(dir_.path(), "first");
  WriteFile(dir_.path() / "deploy/p/b/sub/z.yaml", "z\n");
  std::string second = CommitAll(dir_.path(), "second");
  GitRepo repo = Open();
  auto ids = [&](const std::string& commit) {
    Result<GitTree> t = repo.Tree(commit);
    EXPECT_TRUE(t.ok());
    std::map<std::string, std::string> out;
    Result<std::vector<TreeEntry>> listed = t->List("deploy/p");
    EXPECT_TRUE(listed.ok());
    for (const auto& e : *listed) {
      EXPECT_EQ(e.kind, TreeEntry::Kind::kDirectory);
      out[e.name] = e.id;
    }
    return out;
  };
  auto before = ids(first), after = ids(second);
  EXPECT_EQ(before["a"], Git(dir_.path(), "rev-parse " + first + ":deploy/p/a"));
  EXPECT_EQ(before["a"], after["a"]);
  EXPECT_NE(before["b"], after["b"]) << "a file added below b/ changes b's id";
}

TEST_F(GitTreeTest, SymlinkIsReportedAndNeverFollowed) {
  WriteFile(dir_.path() / "deploy/p/c/real.yaml", "a: 1\n");
  Sh("ln -s real.yaml " + Quote((dir_.path() / "deploy/p/c/link.yaml").string()));
  std::string head = CommitAll(dir_.path(), "link");
  Result<GitTree> tree = Open().Tree(head);
  ASSERT_TRUE(tree.ok());
  Result<std::vector<TreeEntry>> entries = tree->List("deploy/p/c");
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].name, "link.yaml");
  EXPECT_EQ((*entries)[0].kind, TreeEntry::Kind::kSymlink);
  EXPECT_EQ((*entries)[0].id, "");
  EXPECT_EQ((*entries)[1].kind, TreeEntry::Kind::kFile);
  Result<std::string> read = tree->Read("deploy/p/c/link.yaml");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status(), Status::FailedPrecondition("commit " + head.substr(0, 7) +
                                                      ": deploy/p/c/link.yaml: is a symlink; symlinks are not followed"));
}

TEST_F(GitTreeTest, MissingPathsAndBadPaths) {
  WriteFile(dir_.path() / "deploy/p/c/a.yaml", "a\n");
  std::string head = CommitAll(dir_.path(), "first");
  Result<GitTree> tree = Open().Tree(head);
  ASSERT_TRUE(tree.ok());
  std::string c = "commit " + head.substr(0, 7);
  EXPECT_EQ(tree->List("deploy/q").status(), Status::NotFound(c + ": deploy/q: no such directory"));
  EXPECT_EQ(tree->List("deploy/p/c/a.yaml").status(), Status::NotFound(c + ": deploy/p/c/a.yaml: not a directory"));
  EXPECT_EQ(tree->Read("deploy/p/c/b.yaml").status(), Status::NotFound(c + ": deploy/p/c/b.yaml: no such file"));
  EXPECT_EQ(tree->Read("deploy/p").status(), Status::FailedPrecondition(c + ": deploy/p: is a directory"));
  EXPECT_EQ(tree->Read("deploy/../etc").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(tree->Read("/etc/passwd").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(tree->List("deploy//p").status().code(), Status::Code::kInvalidArgument);
}

TEST_F(GitTreeTest, CorruptBlobIsAnErrorNamingThePath) {
  WriteFile(dir_.path() / "deploy/p/c/a.yaml", "a: 1\n");
  std::string head = CommitAll(dir_.path(), "first");
  std::string blob = Git(dir_.path(), "rev-parse HEAD:deploy/p/c/a.yaml");
  fs::path object = dir_.path() / ".git/objects" / blob.substr(0, 2) / blob.substr(2);
  fs::permissions(object, fs::perms::owner_write, fs::perm_options::add);
  WriteFile(object, "this is not zlib data");
  Result<GitTree> tree = Open().Tree(head);
  ASSERT_TRUE(tree.ok());
  Result<std::string> read = tree->Read("deploy/p/c/a.yaml");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), Status::Code::kInternal);
  EXPECT_THAT(read.status().message(),
              HasSubstr("commit " + head.substr(0, 7) + ": deploy/p/c/a.yaml (blob " + blob.substr(0, 7) +
                        "): corrupt or missing object: "));
}

TEST_F(GitTreeTest, MissingBlobIsCorruptionNotAbsence) {
  WriteFile(dir_.path() / "deploy/p/c/a.yaml", "a: 1\n");
  std::string head = CommitAll(dir_.path(), "first");
  std::string blob = Git(dir_.path(), "rev-parse HEAD:deploy/p/c/a.yaml");
  fs::remove(dir_.path() / ".git/objects" / blob.substr(0, 2) / blob.substr(2));
  Result<GitTree> tree = Open().Tree(head);
  ASSERT_TRUE(tree.ok());
  std::string context = "commit " + head.substr(0, 7) + ": deploy/p/c/a.yaml (blob " + blob.substr(0, 7) + ")";
  for (const Status& s : {tree->Read("deploy/p/c/a.yaml").status(), tree->List("deploy/p/c").status()}) {
    EXPECT_EQ(s.code(), Status::Code::kInternal) << s.ToString();
    EXPECT_THAT(s.message(), HasSubstr(context + ": corrupt or missing object: "));
  }
}

// The loader reads a git tree from every core (manifest/file_parser.h); the
// reads are serialised on the repository, and the result is the one thread's.
TEST_F(GitTreeTest, LoadedOnEveryCoreAsOnOne) {
  for (int c = 0; c < 6; ++c)
    for (int p = 0; p < 20; ++p) {
      const std::string name = "pool-" + std::to_string(c) + "-" + std::to_string(p);
      const std::string extra = p % 7 == 3 ? "  slices: zero\n" : "  slices: " + std::to_string(1 + p % 3) + "\n";
      WriteFile(dir_.path() / ("deploy/my-project/c" + std::to_string(c) + "/p" + std::to_string(p) + ".yaml"),
                "apiVersion: tpu-provisioner.io/v1alpha1\nkind: TPUNodePool\nmetadata:\n  name: " + name +
                    "\nspec:\n  accelerator: v5e\n  topology: 4x8\n" + extra);
    }
  std::string head = CommitAll(dir_.path(), "fleet");
  Result<GitTree> tree = Open().Tree(head);
  ASSERT_TRUE(tree.ok());
  manifest::LoadOptions one, many;
  one.threads = 1;
  many.threads = 4;
  manifest::Repo serial = manifest::LoadRepo(*tree, one);
  manifest::Repo parallel = manifest::LoadRepo(*tree, many);
  ASSERT_EQ(serial.targets.size(), 6u);
  EXPECT_TRUE(serial.targets[0].blocked()) << "slices: zero";
  EXPECT_EQ(serial.targets[0].errors.size(), 3u);
  EXPECT_EQ(serial.targets[0].pools.size(), 17u);
  EXPECT_TRUE(parallel == serial);
}

}  // namespace
}  // namespace tpu::source
