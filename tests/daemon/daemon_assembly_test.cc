// The daemon assembled in-process (daemon/daemon.h), as `watch` assembles it:
// a git checkout, the cloud emulator, the HTTP endpoints on an ephemeral port.
// It reconciles a commit, serves /status and /metrics, and stops when asked.
#include "daemon/daemon.h"

#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "daemon/daemon_fixture.h"
#include "source/git_sources.h"

namespace tpu::daemon {
namespace {

using namespace testing;  // the daemon's test helpers (daemon_fixture.h)

TEST(DaemonAssemblyTest, ReconcilesServesAndStops) {
  TempDir tmp;
  const auto repo = tmp.path() / "repo";
  InitRepo(repo);
  WriteFile(repo / "deploy/tpu-proj/c1/cluster.yaml", ClusterYaml("c1"));
  WriteFile(repo / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("serve", 2));
  const std::string head = CommitAll(repo, "two slices");
  CloudFixture cloud;
  auto git = source::GitRepo::Open(repo.string());
  ASSERT_TRUE(git.ok()) << git.status().ToString();
  source::CheckoutSource source(git.value());
  auto waiter = EventWaiter::Create();
  ASSERT_TRUE(waiter.ok());

  DaemonOptions o;
  o.listen = "127.0.0.1:0";
  o.execute = FastExecuteOptions();
  Daemon d(&source, waiter->get(), &cloud.connection(), nullptr, nullptr, o);
  ASSERT_TRUE(d.Start().ok());
  ASSERT_NE(d.port(), 0);
  bool kept_lease = false;
  std::thread run([&] { kept_lease = d.Run(); });
  // However the checks below end, the loop stops and its thread is joined.
  struct StopAndJoin {
    Daemon& d;
    std::thread& t;
    ~StopAndJoin() {
      d.Stop();
      if (t.joinable()) t.join();
    }
  } stop{d, run};

  httplib::Client client("127.0.0.1", d.port());
  nlohmann::json target = nlohmann::json::object();
  for (int i = 0; i < 1000; ++i) {  // up to ~10 s: the first reconcile applies two creates
    auto r = client.Get("/status");
    if (r && r->status == 200) {
      auto status = nlohmann::json::parse(r->body, nullptr, false);
      for (const auto& t : status.value("targets", nlohmann::json::array()))
        if (t.value("target", "") == "tpu-proj/c1") target = t;
      if (target.value("state", "") == "in-sync" && target.value("revision", "") == head) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(target.value("state", ""), "in-sync") << target.dump();
  EXPECT_EQ(cloud.Pools("c1"), (std::map<std::string, int>{{"serve-0", 1}, {"serve-1", 1}}));
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("tpu_provisioner_reconciles_total"), std::string::npos);

  d.Stop();
  run.join();
  EXPECT_TRUE(kept_lease);  // no Lease to lose without Kubernetes
}

}  // namespace
}  // namespace tpu::daemon
