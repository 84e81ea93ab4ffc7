// Watcher over real checkouts: commits, new directories, bursts, overflow,
// wake-ups. Every wait is on the watcher with a generous deadline; nothing
// asserts how long anything took.
#include "source/watcher.h"

#include <fstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "source/git_fixture.h"
#include "source/git_repo.h"

namespace tpu::source {
namespace {

using ::testing::Contains;
using ::testing::IsEmpty;
using namespace tpu::source::testing;
using Clock = std::chrono::steady_clock;
using Kind = WatchResult::Kind;

// Long enough never to be hit on a loaded machine; a wait that reaches it has failed.
constexpr auto kPatience = std::chrono::seconds(20);

class WatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    InitRepo(dir_.path());
    WriteFile(dir_.path() / "deploy/p/c/pools.yaml", "a: 1\n");
    CommitAll(dir_.path(), "first");
  }
  std::unique_ptr<Watcher> Start(bool watch_files) {
    Result<GitRepo> repo = GitRepo::Open(dir_.str());
    EXPECT_TRUE(repo.ok()) << repo.status().ToString();
    WatcherOptions o = CheckoutWatchOptions(*repo, watch_files);
    Result<std::unique_ptr<Watcher>> w = Watcher::Create(o);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return std::move(*w);
  }
  WatchResult WaitForChange(Watcher& w) {
    Result<WatchResult> r = w.Wait(Clock::now() + kPatience);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->kind, Kind::kChanged);
    return *r;
  }
  // Nothing more is queued or pending: an immediate wait times out.
  void ExpectQuiet(Watcher& w) {
    Result<WatchResult> r = w.Wait(Clock::now());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->kind, Kind::kTimeout);
    EXPECT_FALSE(w.HasPending());
  }
  std::string Path(const std::string& rel) const { return (dir_.path() / rel).string(); }
  TempDir dir_;
};

TEST_F(WatcherTest, TimesOutWhenNothingHappens) {
  auto w = Start(true);
  ExpectQuiet(*w);
}

TEST_F(WatcherTest, WakesOnACommit) {
  auto w = Start(/*watch_files=*/false);
  Git(dir_.path(), "commit -q --allow-empty -m second");
  WatchResult r = WaitForChange(*w);
  EXPECT_TRUE(r.refs_changed);
  EXPECT_FALSE(r.files_changed);
  EXPECT_FALSE(r.rescan);
  EXPECT_THAT(r.paths, Contains(Path(".git/refs/heads/main")));
  ExpectQuiet(*w);
}

// The daemon's local-checkout cycle: an open repository, a commit made by
// someone else, a wake-up, and the new commit readable through the same handle.
TEST_F(WatcherTest, NewCommitIsReadableThroughTheOpenRepository) {
  Result<GitRepo> repo = GitRepo::Open(dir_.str());
  ASSERT_TRUE(repo.ok());
  Result<std::string> before = repo->HeadCommit();
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(repo->Tree(*before)->Read("deploy/p/c/pools.yaml").ok());  // objects cached from here on
  auto w = Start(false);
  WriteFile(dir_.path() / "deploy/p/c/pools.yaml", "a: 2\n");
  std::string after = CommitAll(dir_.path(), "second");
  EXPECT_TRUE(WaitForChange(*w).refs_changed);
  EXPECT_EQ(*repo->HeadCommit(), after);
  EXPECT_EQ(*repo->Tree(after)->Read("deploy/p/c/pools.yaml"), "a: 2\n");
  Git(dir_.path(), "gc -q");  // objects move into a pack the open repository has not seen
  EXPECT_EQ(*repo->Tree(after)->Read("deploy/p/c/pools.yaml"), "a: 2\n");
}

TEST_F(WatcherTest, LinkedWorktreeWakesOnItsCommits) {
  fs::path wt = dir_.path().parent_path() / (dir_.path().filename().string() + "-wt");
  Git(dir_.path(), "worktree add -q -b side " + Quote(wt.string()));
  Result<GitRepo> repo = GitRepo::Open(wt.string());
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  WatcherOptions o = CheckoutWatchOptions(*repo, true);
  EXPECT_NE(o.git_dir, o.common_dir);
  Result<std::unique_ptr<Watcher>> w = Watcher::Create(o);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  std::string c = CommitAll(wt, "on side");
  EXPECT_TRUE(WaitForChange(**w).refs_changed);
  EXPECT_EQ(*repo->HeadCommit(), c);
  fs::remove_all(wt);
}

TEST_F(WatcherTest, WakesOnUpdateRefAndPackedRefs) {
  auto w = Start(false);
  std::string head = Git(dir_.path(), "rev-parse HEAD");
  Git(dir_.path(), "update-ref refs/heads/feature/x " + head);  // a new directory under refs/heads
  WatchResult r = WaitForChange(*w);
  EXPECT_TRUE(r.refs_changed);
  EXPECT_THAT(r.paths, Contains(Path(".git/refs/heads/feature/x")));
  Git(dir_.path(), "pack-refs --all");
  EXPECT_TRUE(WaitForChange(*w).refs_changed);
  // Refs are not debounced: pack-refs' removal of the loose refs may come as
  // wake-ups of their own, before the HEAD rewrite.
  Git(dir_.path(), "checkout -q --detach");  // HEAD itself rewritten
  bool head_seen = false;
  for (int i = 0; i < 5 && !head_seen; ++i)
    for (const auto& p : WaitForChange(*w).paths) head_seen |= p == Path(".git/HEAD");
  EXPECT_TRUE(head_seen);
}

// A ref moves with one atomic rename, so its wake-up does not wait out the
// (file) debounce: with a debounce longer than the test's patience, a commit is
// still reported. File changes still wait for their quiet period.
TEST_F(WatcherTest, RefUpdatesAreNotDebouncedFileChangesAre) {
  Result<GitRepo> repo = GitRepo::Open(dir_.str());
  ASSERT_TRUE(repo.ok());
  WatcherOptions o = CheckoutWatchOptions(*repo, /*watch_files=*/true);
  o.debounce = std::chrono::hours(1);
  o.max_delay = std::chrono::hours(1);
  Result<std::unique_ptr<Watcher>> created = Watcher::Create(o);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Watcher& w = **created;
  Git(dir_.path(), "commit -q --allow-empty -m second");
  WatchResult r = WaitForChange(w);
  EXPECT_TRUE(r.refs_changed);
  EXPECT_FALSE(r.files_changed);
  WriteFile(dir_.path() / "deploy/p/c/pools.yaml", "a: 2\n");
  Result<WatchResult> held = w.Wait(Clock::now() + std::chrono::milliseconds(300));
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(held->kind, Kind::kTimeout);
  EXPECT_TRUE(w.HasPending());
}

TEST_F(WatcherTest, IgnoresIndexOnlyChanges) {
  auto w = Start(false);
  WriteFile(dir_.path() / "README.md", "hi\n");
  Git(dir_.path(), "add README.md");  // rewrites .git/index, moves no ref
  ExpectQuiet(*w);
}

TEST_F(WatcherTest, SeesANewFileInANewDirectoryAndWatchesIt) {
  auto w = Start(/*watch_files=*/true);
  // Created before the watcher reads the directory's creation: found by the scan of the new directory.
  WriteFile(dir_.path() / "deploy/q/new/pools.yaml", "b: 1\n");
  WatchResult r = WaitForChange(*w);
  EXPECT_TRUE(r.files_changed);
  EXPECT_FALSE(r.refs_changed);
  EXPECT_THAT(r.paths, Contains(Path("deploy/q/new/pools.yaml")));
  // Now watched: a second file there raises its own event.
  WriteFile(dir_.path() / "deploy/q/new/more.yaml", "c: 1\n");
  EXPECT_THAT(WaitForChange(*w).paths, Contains(Path("deploy/q/new/more.yaml")));
  ExpectQuiet(*w);
}

TEST_F(WatcherTest, WatchesADeployTreeThatAppearsLater) {
  fs::remove_all(dir_.path() / "deploy");
  auto w = Start(true);
  WriteFile(dir_.path() / "deploy/p/c/pools.yaml", "a: 2\n");
  EXPECT_THAT(WaitForChange(*w).paths, Contains(Path("deploy/p/c/pools.yaml")));
  WriteFile(dir_.path() / "deploy/p/c/other.yaml", "a: 3\n");
  EXPECT_THAT(WaitForChange(*w).paths, Contains(Path("deploy/p/c/other.yaml")));
}

TEST_F(WatcherTest, FollowsARenamedDirectory) {
  auto w = Start(true);
  fs::rename(dir_.path() / "deploy/p/c", dir_.path() / "deploy/p/d");
  WaitForChange(*w);
  WriteFile(dir_.path() / "deploy/p/d/x.yaml", "x\n");
  EXPECT_THAT(WaitForChange(*w).paths, Contains(Path("deploy/p/d/x.yaml")));
}

TEST_F(WatcherTest, DebounceCoalescesABurst) {
  auto w = Start(true);
  for (int i = 0; i < 20; ++i) WriteFile(dir_.path() / ("deploy/p/c/f" + std::to_string(i) + ".yaml"), "x\n");
  Git(dir_.path(), "add -A");
  Git(dir_.path(), "commit -q -m burst");
  WatchResult r = WaitForChange(*w);
  EXPECT_TRUE(r.files_changed);
  EXPECT_TRUE(r.refs_changed);
  EXPECT_THAT(r.paths, Contains(Path("deploy/p/c/f0.yaml")));
  EXPECT_THAT(r.paths, Contains(Path("deploy/p/c/f19.yaml")));
  ExpectQuiet(*w);  // one wake-up for the whole burst
}

TEST_F(WatcherTest, OverflowAsksForARescanAndKeepsWatching) {
  std::ifstream limit_file("/proc/sys/fs/inotify/max_queued_events");
  long limit = 0;
  limit_file >> limit;
  if (limit <= 0 || limit > 100000) GTEST_SKIP() << "max_queued_events is " << limit;
  auto w = Start(true);
  // Each rewrite queues an IN_CLOSE_WRITE; alternating two files defeats
  // inotify's merging of identical consecutive events. Nobody reads meanwhile.
  fs::path dir = dir_.path() / "deploy/p/c";
  for (long i = 0; i < limit + 100; ++i) std::ofstream(dir / (i % 2 ? "a" : "b"));
  // Made after the queue is full: its IN_CREATE is lost, only the rescan can find it.
  fs::create_directories(dir_.path() / "deploy/p/late");
  WatchResult r = WaitForChange(*w);
  EXPECT_TRUE(r.rescan);
  EXPECT_TRUE(r.files_changed);
  EXPECT_TRUE(r.refs_changed);
  ExpectQuiet(*w);
  WriteFile(dir_.path() / "deploy/p/late/x.yaml", "x\n");
  WatchResult after = WaitForChange(*w);
  EXPECT_FALSE(after.rescan);
  EXPECT_THAT(after.paths, Contains(Path("deploy/p/late/x.yaml")));
}

TEST_F(WatcherTest, WakeReturnsAtOnceFromAnotherThread) {
  auto w = Start(true);
  std::thread t([&] { w->Wake(); });
  Result<WatchResult> r = w->Wait(Clock::time_point::max());
  t.join();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind, Kind::kWoken);
  ExpectQuiet(*w);  // the wake-up is consumed
}

TEST_F(WatcherTest, WakeDoesNotLoseAPendingChange) {
  auto w = Start(true);
  WriteFile(dir_.path() / "deploy/p/c/pools.yaml", "a: 2\n");
  w->Wake();
  Result<WatchResult> r = w->Wait(Clock::now() + kPatience);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind, Kind::kWoken);
  EXPECT_THAT(WaitForChange(*w).paths, Contains(Path("deploy/p/c/pools.yaml")));
}

TEST(WatcherCreateTest, WithNoPathsItIsATimerWithAWakeUp) {
  Result<std::unique_ptr<Watcher>> w = Watcher::Create({});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ((*w)->watch_count(), 0u);
  EXPECT_EQ((*w)->Wait(Clock::now())->kind, Kind::kTimeout);
  (*w)->Wake();
  (*w)->Wake();  // coalesced
  EXPECT_EQ((*w)->Wait(Clock::time_point::max())->kind, Kind::kWoken);
  EXPECT_EQ((*w)->Wait(Clock::now())->kind, Kind::kTimeout);
}

TEST(WatcherCreateTest, MissingGitDirIsNotFound) {
  WatcherOptions o;
  o.git_dir = "/nonexistent/.git";
  Result<std::unique_ptr<Watcher>> w = Watcher::Create(o);
  EXPECT_EQ(w.status(), Status::NotFound("watch /nonexistent/.git: no such directory"));
}

}  // namespace
}  // namespace tpu::source
