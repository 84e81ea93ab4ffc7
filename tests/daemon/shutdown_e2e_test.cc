// `watch` stops within 2 s of SIGTERM with every Kubernetes watch open and no
// apply running (issue 24): the real binary, the Kubernetes API emulator
// sending no bookmarks (as a real API server mostly does not), so nothing but
// the daemon's own cancellation can end the open watch streams early. The
// time is a bound with margin, not a benchmark: a stop takes tens of
// milliseconds, and without the cancellation it took the watches' timeouts
// (5-10 s).
#include <signal.h>
#include <sys/wait.h>

#include <chrono>

#include <gtest/gtest.h>

#include "daemon/kube_e2e_fixture.h"

namespace tpu::daemon {
namespace {

using namespace testing;

kubesim::KubeApiServer::Options NoBookmarks() {
  kubesim::KubeApiServer::Options o;
  o.bookmark_interval = std::chrono::hours(1);
  return o;
}

class ShutdownE2eTest : public KubeE2eFixture {
 protected:
  ShutdownE2eTest() : KubeE2eFixture(FastEmulatorOptions(), NoBookmarks()) {}
};

TEST_F(ShutdownE2eTest, SigtermExitsWithinTwoSecondsWithEveryWatchOpen) {
  WriteFile(repo_ / "deploy/tpu-proj/c1/cluster.yaml",
            ClusterYaml("c1") + "  kueue:\n    clusterQueue: tpu-queue\n    mode: ready\n");
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  CommitAll(repo_, "one slice");
  auto d = Start({"--kube-resync-interval", "1h", "--leader-elect", "--leader-elect-namespace", "default"});
  ASSERT_NE(d->Port(), 0) << d->Log();

  // Applied, quota written, and every watch the daemon keeps is open.
  ASSERT_TRUE(WaitUntil([&] {
    json t = d->Target("tpu-proj/c1");
    return t.is_object() && t["state"] == "in-sync" && cloud_.Pools("c1").count("train-0") == 1;
  })) << d->Log();
  for (const char* resource : {"nodes", "pods", "jobsets", "workloads"}) {
    ASSERT_TRUE(WaitUntil([&] { return api_.OpenWatches(resource) >= 1; })) << resource << "\n" << d->Log();
  }

  auto start = std::chrono::steady_clock::now();
  d->Signal(SIGTERM);
  auto status = d->WaitExit();
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(status.has_value()) << d->Log();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << d->Log();
  EXPECT_LT(took, std::chrono::seconds(2))
      << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms\n" << d->Log();
  EXPECT_NE(d->Log().find("lease released"), std::string::npos) << d->Log();
}

}  // namespace
}  // namespace tpu::daemon
