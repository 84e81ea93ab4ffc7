// RemoteRepo against bare upstream repositories on disk (file:// and plain
// paths): clone, fetch, fast-forward, force-push, unreachable and missing.
#include "source/remote.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "source/git_fixture.h"

namespace tpu::source {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace tpu::source::testing;

// An upstream bare repository and a developer checkout that pushes to it.
class RemoteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Sh("git init -q --bare -b main " + Quote(upstream().string()));
    Sh("git clone -q " + Quote(upstream().string()) + " " + Quote(dev().string()));
    Git(dev(), "checkout -q -b main");
  }
  fs::path upstream() const { return root_.path() / "upstream.git"; }
  fs::path dev() const { return root_.path() / "dev"; }
  std::string work() const { return (root_.path() / "work").string(); }
  std::string Push(const std::string& file, const std::string& content, const std::string& flags = "") {
    WriteFile(dev() / file, content);
    std::string c = CommitAll(dev(), "change " + file);
    Git(dev(), "push -q " + flags + " origin main");
    return c;
  }
  RemoteRepo OpenRemote(const std::string& url, const std::string& branch = "main") {
    Result<RemoteRepo> r = RemoteRepo::Open({url, branch, work(), {}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return *r;
  }
  TempDir root_;
};

TEST_F(RemoteTest, ClonesFetchesAndFastForwards) {
  std::string first = Push("deploy/p/c/pools.yaml", "a: 1\n");
  RemoteRepo remote = OpenRemote("file://" + upstream().string());
  EXPECT_EQ(remote.BranchCommit().status().code(), Status::Code::kNotFound);

  Result<std::string> fetched = remote.Fetch();
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(*fetched, first);
  Result<GitTree> tree = remote.repo().Tree(*fetched);
  ASSERT_TRUE(tree.ok());
  EXPECT_EQ(*tree->Read("deploy/p/c/pools.yaml"), "a: 1\n");
  EXPECT_EQ(*remote.UpdateBranch(first, false), BranchUpdate::kCreated);
  EXPECT_EQ(*remote.BranchCommit(), first);
  EXPECT_EQ(*remote.repo().HeadCommit(), first);  // HEAD of the bare clone is the branch

  std::string second = Push("deploy/p/d/pools.yaml", "b: 1\n");
  fetched = remote.Fetch();
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(*fetched, second);
  EXPECT_TRUE(*remote.repo().DescendsFrom(second, first));
  EXPECT_THAT(*remote.repo().ChangedPaths(first, second), ElementsAre("deploy/p/d/pools.yaml"));
  EXPECT_EQ(*remote.UpdateBranch(second, false), BranchUpdate::kFastForward);
  EXPECT_EQ(*remote.UpdateBranch(second, false), BranchUpdate::kUnchanged);
  EXPECT_EQ(*remote.BranchCommit(), second);
  EXPECT_EQ(*remote.Fetch(), second);  // nothing new
}

TEST_F(RemoteTest, ReopensItsWorkDirectory) {
  std::string first = Push("a.yaml", "1\n");
  {
    RemoteRepo remote = OpenRemote(upstream().string());  // a plain path works too
    ASSERT_TRUE(remote.Fetch().ok());
    ASSERT_TRUE(remote.UpdateBranch(first, false).ok());
  }
  RemoteRepo again = OpenRemote(upstream().string());
  EXPECT_EQ(*again.BranchCommit(), first);
}

TEST_F(RemoteTest, RefusesAWorkDirectoryHoldingSomethingElse) {
  Push("a.yaml", "1\n");
  OpenRemote("file://" + upstream().string());
  Result<RemoteRepo> other = RemoteRepo::Open({"file:///elsewhere.git", "main", work(), {}});
  EXPECT_EQ(other.status(), Status::FailedPrecondition("work directory " + work() + " is a clone of file://" +
                                                       upstream().string() +
                                                       ", not file:///elsewhere.git; empty it or choose another"));
  WriteFile(root_.path() / "junk/file", "x");
  Result<RemoteRepo> junk = RemoteRepo::Open({"file:///x.git", "main", (root_.path() / "junk").string(), {}});
  EXPECT_EQ(junk.status().code(), Status::Code::kFailedPrecondition);
  Result<RemoteRepo> checkout = RemoteRepo::Open({"file:///x.git", "main", dev().string(), {}});
  EXPECT_EQ(checkout.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(RemoteRepo::Open({"file:///x.git", "bad..name", work(), {}}).status(),
            Status::InvalidArgument("\"bad..name\" is not a valid branch name"));
}

TEST_F(RemoteTest, DetectsAForcePush) {
  Push("a.yaml", "1\n");
  std::string applied = Push("a.yaml", "2\n");
  RemoteRepo remote = OpenRemote("file://" + upstream().string());
  ASSERT_EQ(*remote.Fetch(), applied);
  ASSERT_TRUE(remote.UpdateBranch(applied, false).ok());

  Git(dev(), "reset -q --hard HEAD~1");
  std::string rewritten = Push("a.yaml", "3\n", "--force");
  Result<std::string> fetched = remote.Fetch();
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(*fetched, rewritten);
  EXPECT_FALSE(*remote.repo().DescendsFrom(rewritten, applied));
  EXPECT_EQ(remote.UpdateBranch(rewritten, false).status(),
            Status::FailedPrecondition("refs/heads/main: " + rewritten.substr(0, 7) + " does not descend from " +
                                       applied.substr(0, 7) + " (history rewritten upstream); branch not moved"));
  EXPECT_EQ(*remote.BranchCommit(), applied);
  EXPECT_EQ(*remote.UpdateBranch(rewritten, true), BranchUpdate::kRewritten);
  EXPECT_EQ(*remote.BranchCommit(), rewritten);
}

TEST_F(RemoteTest, AStopRequestAbortsTheFetch) {
  Push("a.yaml", "1\n");
  RemoteRepo remote = OpenRemote("file://" + upstream().string());
  int polls = 0;
  Result<std::string> r = remote.Fetch([&] { return ++polls > 0; });
  EXPECT_EQ(r.status(), Status::DeadlineExceeded("fetch file://" + upstream().string() +
                                                 ": stopped before it finished"));
  EXPECT_GT(polls, 0);
  EXPECT_TRUE(remote.Fetch([] { return false; }).ok());  // and nothing is left broken
}

TEST_F(RemoteTest, MissingBranchIsNotFound) {
  Push("a.yaml", "1\n");
  RemoteRepo remote = OpenRemote("file://" + upstream().string(), "release");
  EXPECT_EQ(remote.Fetch().status(),
            Status::NotFound("fetch file://" + upstream().string() + ": branch release not found on the remote"));
}

TEST_F(RemoteTest, BranchDeletedUpstreamIsNotFound) {
  Push("a.yaml", "1\n");
  Git(dev(), "push -q origin main:release");
  RemoteRepo remote = OpenRemote("file://" + upstream().string(), "release");
  ASSERT_TRUE(remote.Fetch().ok());
  Git(dev(), "push -q origin :release");
  EXPECT_EQ(remote.Fetch().status().code(), Status::Code::kNotFound);
}

TEST_F(RemoteTest, UnreachableRemotesAreUnavailable) {
  RemoteRepo missing = OpenRemote("file://" + (root_.path() / "nowhere.git").string());
  Result<std::string> r = missing.Fetch();
  EXPECT_EQ(r.status().code(), Status::Code::kUnavailable) << r.status().ToString();
  EXPECT_THAT(r.status().message(), HasSubstr("fetch file://" + (root_.path() / "nowhere.git").string() + ": "));

  fs::remove_all(work());
  // Port 1 on loopback: nothing listens, the connection is refused at once.
  RemoteRepo refused = OpenRemote("http://user:s3cret-token@127.0.0.1:1/repo.git");
  r = refused.Fetch();
  EXPECT_EQ(r.status().code(), Status::Code::kUnavailable) << r.status().ToString();
  EXPECT_THAT(r.status().message(), HasSubstr("fetch http://127.0.0.1:1/repo.git: "));
  EXPECT_THAT(r.status().message(), Not(HasSubstr("s3cret")));
}

TEST_F(RemoteTest, CorruptUpstreamObjectFailsTheFetch) {
  std::string c = Push("a.yaml", "precious\n");
  std::string blob = Git(dev(), "rev-parse HEAD:a.yaml");
  fs::path object = upstream() / "objects" / blob.substr(0, 2) / blob.substr(2);
  fs::permissions(object, fs::perms::owner_write, fs::perm_options::add);
  WriteFile(object, "garbage");
  RemoteRepo remote = OpenRemote("file://" + upstream().string());
  Result<std::string> r = remote.Fetch();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kUnavailable) << r.status().ToString();
}

}  // namespace
}  // namespace tpu::source
