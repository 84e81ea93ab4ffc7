// `tpu-provisioner watch` (the real binary) with a deny change window on the
// wall clock: a commit's creates are planned but held while the window is
// closed, /status says until when, and the daemon applies them by itself
// when the window opens (it wakes at that moment; nothing pokes it).
#include <chrono>
#include <ctime>
#include <filesystem>

#include <gtest/gtest.h>

#include "base/change_windows.h"
#include "daemon/daemon_fixture.h"
#include "daemon/daemon_process.h"

namespace tpu::daemon {
namespace {

using namespace testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

TEST(WindowE2eTest, DenyWindowHoldsACommitsCreatesThenTheyApplyWhenItOpens) {
  TempDir tmp;
  CloudFixture cloud;
  test_support::MetadataServer metadata;
  fs::path repo = tmp.path() / "repo";
  InitRepo(repo);
  // A fixed deny window from an hour ago until 8 s from now (RFC 3339 ranges
  // are to the second; cron windows to the minute).
  const int64_t now = std::time(nullptr);
  const std::string until = FormatRfc3339(now + 8);
  WriteFile(repo / "deploy/tpu-proj/c1/cluster.yaml",
            ClusterYaml("c1") + "  changeWindows:\n    - kind: deny\n      start: \"" + FormatRfc3339(now - 3600) +
                "\"\n      end: \"" + until + "\"\n");
  WriteFile(repo / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  const std::string head = CommitAll(repo, "two slices, during the freeze");
  DaemonProcess d({"--repo", repo.string(), "--drift-interval", "1h"}, (tmp.path() / "daemon.log").string(),
                  cloud.emulator().endpoint(), metadata.host());
  ASSERT_NE(d.Port(), 0) << d.Log();

  json held;
  ASSERT_TRUE(WaitUntil([&] {
    json s = d.Status();
    if (!s.is_object() || s["revision"] != head || s["targets"].empty()) return false;
    held = s["targets"][0];
    return held["state"] == "waiting-for-window";
  }, 10s)) << d.Status().dump(2) << d.Log();
  EXPECT_EQ(held["held"]["actions"], 2);
  EXPECT_EQ(held["held"]["until"], until);
  EXPECT_EQ(held["lastPlan"]["create"], 2);  // planned all the same
  // Still inside the window (it has 8 s): nothing was created.
  if (std::time(nullptr) < now + 8) {
    EXPECT_TRUE(cloud.Pools("c1").empty());
  }

  ASSERT_TRUE(WaitUntil([&] { return cloud.Pools("c1").size() == 2; }, 30s)) << d.Status().dump(2) << d.Log();
  EXPECT_GE(std::time(nullptr), now + 8);  // not before the window opened
  ASSERT_TRUE(WaitUntil([&] {
    json s = d.Status();
    return s.is_object() && !s["targets"].empty() && s["targets"][0]["state"] == "in-sync";
  }, 10s)) << d.Status().dump(2);
  EXPECT_EQ(d.Status()["targets"][0]["held"]["actions"], 0);
}

}  // namespace
}  // namespace tpu::daemon
