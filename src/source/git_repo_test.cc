// GitRepo: opening, HEAD, ancestry and changed paths over real repositories.
#include "source/git_repo.h"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "source/git_fixture.h"

namespace tpu::source {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace tpu::source::testing;

TEST(GitRepoTest, OpenFailsOnANonRepository) {
  TempDir dir;
  Result<GitRepo> r = GitRepo::Open(dir.str());
  EXPECT_EQ(r.status(), Status::NotFound("open repository " + dir.str() + ": not a git repository"));
}

TEST(GitRepoTest, AnotherUsersRepositoryNamesTheFix) {
  TempDir dir;
  InitRepo(dir.path());
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the repository away";
  Sh("chown -R 4321:4321 " + Quote(dir.str()));
  Result<GitRepo> r = GitRepo::Open(dir.str());
  EXPECT_EQ(r.status(), Status::FailedPrecondition(
                            "open repository " + dir.str() + ": owned by uid 4321, not by this process (uid 0); "
                            "git refuses it unless the git config lists it: "
                            "git config --global --add safe.directory " + dir.str()));
}

TEST(GitRepoTest, HeadOfAFreshRepositoryIsNotFound) {
  TempDir dir;
  InitRepo(dir.path());
  Result<GitRepo> r = GitRepo::Open(dir.str());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->HeadCommit().status().code(), Status::Code::kNotFound);
  EXPECT_EQ(r->workdir(), dir.str() + "/");
  EXPECT_EQ(r->git_dir(), dir.str() + "/.git/");
}

TEST(GitRepoTest, HeadAndResolve) {
  TempDir dir;
  InitRepo(dir.path());
  std::string first = CommitAll(dir.path(), "first");
  std::string second = CommitAll(dir.path(), "second");
  Result<GitRepo> r = GitRepo::Open(dir.str());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r->HeadCommit(), second);
  EXPECT_EQ(*r->ResolveCommit("refs/heads/main"), second);
  EXPECT_EQ(*r->ResolveCommit("HEAD~1"), first);
  EXPECT_EQ(r->ResolveCommit("refs/heads/nope").status(),
            Status::NotFound("\"refs/heads/nope\": no such revision in " + dir.str() + "/.git/"));
  EXPECT_EQ(r->Tree("1234").status(), Status::InvalidArgument("not a full commit id: \"1234\""));
  EXPECT_EQ(r->Tree(std::string(40, 'a')).status(), Status::NotFound("commit aaaaaaa is not in the repository"));
}

TEST(GitRepoTest, CommitInfo) {
  TempDir dir;
  InitRepo(dir.path());
  Git(dir.path(), "commit -q --allow-empty -m 'Add v5p pools' -m 'Details here.'");
  std::string head = Git(dir.path(), "rev-parse HEAD");
  Result<GitRepo> r = GitRepo::Open(dir.str());
  ASSERT_TRUE(r.ok());
  Result<CommitInfo> info = r->Info(head);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->id, head);
  EXPECT_EQ(info->summary, "Add v5p pools");
  EXPECT_EQ(info->author, "t <t@example.com>");
  EXPECT_EQ(info->time, std::stoll(Git(dir.path(), "log -1 --format=%ct")));
}

TEST(GitRepoTest, DescendsFromDetectsHistoryRewrites) {
  TempDir dir;
  InitRepo(dir.path());
  std::string base = CommitAll(dir.path(), "base");
  std::string applied = CommitAll(dir.path(), "applied");
  std::string next = CommitAll(dir.path(), "next");
  // A rewrite: a sibling of `applied`, as after `git commit --amend` + force-push.
  Git(dir.path(), "reset -q --hard " + base);
  std::string rewritten = CommitAll(dir.path(), "rewritten");
  Result<GitRepo> r = GitRepo::Open(dir.str());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(*r->DescendsFrom(next, applied));
  EXPECT_TRUE(*r->DescendsFrom(applied, applied));
  EXPECT_FALSE(*r->DescendsFrom(rewritten, applied));
  EXPECT_FALSE(*r->DescendsFrom(base, applied));  // moved backwards
  EXPECT_EQ(r->DescendsFrom(next, std::string(40, 'b')).status().code(), Status::Code::kNotFound);
}

TEST(GitRepoTest, ChangedPathsBetweenCommits) {
  TempDir dir;
  InitRepo(dir.path());
  WriteFile(dir.path() / "deploy/p/a/x.yaml", "1\n");
  WriteFile(dir.path() / "deploy/p/b/y.yaml", "1\n");
  WriteFile(dir.path() / "deploy/p/c/z.yaml", "1\n");
  WriteFile(dir.path() / "README.md", "hi\n");
  std::string first = CommitAll(dir.path(), "first");
  WriteFile(dir.path() / "deploy/p/a/x.yaml", "2\n");              // modified
  Git(dir.path(), "mv deploy/p/b/y.yaml deploy/p/b/y2.yaml");     // renamed: both sides
  fs::remove_all(dir.path() / "deploy/p/c");                       // target removed
  WriteFile(dir.path() / "deploy/q/d/new.yaml", "1\n");            // target added
  std::string second = CommitAll(dir.path(), "second");
  Result<GitRepo> r = GitRepo::Open(dir.str());
  ASSERT_TRUE(r.ok());
  Result<std::vector<std::string>> changed = r->ChangedPaths(first, second);
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_THAT(*changed, ElementsAre("deploy/p/a/x.yaml", "deploy/p/b/y.yaml", "deploy/p/b/y2.yaml",
                                    "deploy/p/c/z.yaml", "deploy/q/d/new.yaml"));
  EXPECT_THAT(*r->ChangedPaths(second, second), ElementsAre());
  EXPECT_THAT(*r->ChangedPaths("", first),
              ElementsAre("README.md", "deploy/p/a/x.yaml", "deploy/p/b/y.yaml", "deploy/p/c/z.yaml"));
}

}  // namespace
}  // namespace tpu::source
