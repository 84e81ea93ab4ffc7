// The Reconciler's Kueue steps against a real git repository, the cloud
// emulator and the Kubernetes API emulator: which target the quota follows
// (one with spec.kueue, or --kube-target when there are several), the gate
// holding deletes when Kubernetes cannot be asked, and --dry-run writing
// nothing. The daemon clock is a FakeEnv; nothing sleeps.
#include <gtest/gtest.h>

#include "base/fake_env.h"
#include "daemon/daemon_fixture.h"
#include "source/git_sources.h"
#include "daemon/reconciler.h"
#include "daemon/status_json.h"
#include "kube/resource.h"
#include "kube/rest_client.h"
#include "sim/kube/api_server.h"

namespace tpu::daemon {
namespace {

using namespace testing;
using namespace std::chrono_literals;
namespace res = kube::resources;

std::string KueueCluster(const std::string& name, const std::string& queue) {
  return ClusterYaml(name) + "  kueue:\n    clusterQueue: " + queue + "\n";
}

// Forwards to KubeKueue; the scale-down check fails while `gate_down` is set.
class FlakyKueue : public KueuePort {
 public:
  explicit FlakyKueue(KueuePort* real) : real_(real) {}
  Result<kueue::QuotaReport> Sync(const manifest::Target& t, const kueue::KueueConfig& c,
                                 const std::set<std::string>& excluded) override {
    ++syncs;
    return real_->Sync(t, c, excluded);
  }
  Result<kueue::ScaleDownVerdict> CheckScaleDown(const manifest::Target& t, const kueue::KueueConfig& c,
                                                const std::vector<kueue::PoolRemoval>& r) override {
    if (gate_down) return Status::Unavailable("injected: API server unreachable");
    return real_->CheckScaleDown(t, c, r);
  }
  bool gate_down = false;
  int syncs = 0;

 private:
  KueuePort* real_;
};

class ReconcilerKueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api_.Start().ok());
    kube::RestConfig rc;
    rc.server = api_.url();
    client_ = std::make_unique<kube::RestClient>(rc);
    real_kueue_ = std::make_unique<KubeKueue>(*client_, kube_clock_);
    kueue_ = std::make_unique<FlakyKueue>(real_kueue_.get());
    InitRepo(dir());
  }

  std::unique_ptr<Reconciler> Make(ReconcilerOptions o = {}) {
    auto repo = source::GitRepo::Open(dir().string());
    EXPECT_TRUE(repo.ok());
    source_ = std::make_unique<source::CheckoutSource>(repo.value());
    cloud_port_ = std::make_unique<ConnectionCloud>(&cloud_.connection(), FastExecuteOptions());
    o.kueue = kueue_.get();
    o.kueue_resync = 10s;
    return std::make_unique<Reconciler>(source_.get(), cloud_port_.get(), &clock_, o);
  }

  bool QueueExists(const std::string& name) { return client_->Get(res::kClusterQueues, "", name).ok(); }

  const std::filesystem::path& dir() const { return tmp_.path(); }

  TempDir tmp_;
  CloudFixture cloud_;
  FakeEnv clock_;
  kubesim::KubeApiServer api_{kubesim::KubeApiServer::Options{}};
  std::unique_ptr<kube::RestClient> client_;
  Clock& kube_clock_ = Env::Default();
  std::unique_ptr<KubeKueue> real_kueue_;
  std::unique_ptr<FlakyKueue> kueue_;
  std::unique_ptr<source::CheckoutSource> source_;
  std::unique_ptr<ConnectionCloud> cloud_port_;
};

TEST_F(ReconcilerKueueTest, SeveralTargetsWithKueueNeedKubeTarget) {
  WriteFile(dir() / "deploy/tpu-proj/c1/cluster.yaml", KueueCluster("c1", "queue-one"));
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  WriteFile(dir() / "deploy/tpu-proj/c2/cluster.yaml", KueueCluster("c2", "queue-two"));
  WriteFile(dir() / "deploy/tpu-proj/c2/pools.yaml", PoolYaml("serve", 2));
  CommitAll(dir(), "two kueue targets");

  auto ambiguous = Make();
  ASSERT_TRUE(ambiguous->RunOnce().error.ok());
  KueueStatus k = ambiguous->Snapshot().kueue;
  EXPECT_EQ(k.target, "");
  EXPECT_EQ(k.last_error,
            "several targets have spec.kueue (tpu-proj/c1, tpu-proj/c2); say which one this Kubernetes cluster is "
            "with --kube-target");
  EXPECT_EQ(kueue_->syncs, 0);
  EXPECT_FALSE(QueueExists("queue-one"));
  EXPECT_FALSE(QueueExists("queue-two"));

  ReconcilerOptions o;
  o.kube_target = "tpu-proj/c2";
  auto named = Make(o);
  ASSERT_TRUE(named->RunOnce().error.ok());
  k = named->Snapshot().kueue;
  EXPECT_EQ(k.target, "tpu-proj/c2");
  EXPECT_EQ(k.last_error, "");
  ASSERT_EQ(k.flavors.size(), 1u);
  EXPECT_EQ(k.flavors[0].nominal_quota, 8);
  EXPECT_TRUE(QueueExists("queue-two"));
  EXPECT_FALSE(QueueExists("queue-one"));
}

TEST_F(ReconcilerKueueTest, DeletesAreHeldWhileTheGateCannotAskKubernetes) {
  WriteFile(dir() / "deploy/tpu-proj/c1/cluster.yaml", KueueCluster("c1", "tpu-queue"));
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  CommitAll(dir(), "two slices");
  auto r = Make();
  ASSERT_TRUE(r->RunOnce().error.ok());
  ASSERT_EQ(cloud_.Pools("c1").size(), 2u);

  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1) + "---\n" + PoolYaml("serve", 1, "1x1"));
  CommitAll(dir(), "one slice, and serve");
  kueue_->gate_down = true;
  r->RunOnce();
  EXPECT_EQ(cloud_.Pools("c1").count("train-1"), 1u) << "deleted without asking Kueue";
  EXPECT_EQ(cloud_.Pools("c1").count("serve-0"), 1u) << "the rest of the plan must go on";
  DaemonStatus s = r->Snapshot();
  ASSERT_EQ(s.kueue.scale_down_waits.size(), 1u) << StatusJson(s).dump(2);
  EXPECT_EQ(s.kueue.scale_down_waits[0].pools, std::vector<std::string>{"train-1"});
  EXPECT_NE(s.kueue.scale_down_waits[0].message.find("injected: API server unreachable"), std::string::npos);
  for (const auto& t : s.targets)
    if (t.key == "tpu-proj/c1") { EXPECT_EQ(t.state, TargetState::kWaitingForWorkloads); }

  // Kubernetes answers again; no workload is admitted: the delete proceeds
  // on the next pass, with no commit needed.
  kueue_->gate_down = false;
  clock_.Advance(11s);
  EXPECT_LE(r->NextDue(), clock_.Now());
  r->RunOnce();
  EXPECT_EQ(cloud_.Pools("c1").count("train-1"), 0u);
  s = r->Snapshot();
  EXPECT_TRUE(s.kueue.scale_down_waits.empty());
  for (const auto& t : s.targets)
    if (t.key == "tpu-proj/c1") { EXPECT_EQ(t.state, TargetState::kInSync); }
}

TEST_F(ReconcilerKueueTest, DryRunWritesNothingToKubernetes) {
  WriteFile(dir() / "deploy/tpu-proj/c1/cluster.yaml", KueueCluster("c1", "tpu-queue"));
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  CommitAll(dir(), "one slice");
  ReconcilerOptions o;
  o.dry_run = true;
  auto r = Make(o);
  ASSERT_TRUE(r->RunOnce().error.ok());
  EXPECT_EQ(kueue_->syncs, 0);
  EXPECT_FALSE(QueueExists("tpu-queue"));
  EXPECT_EQ(r->Snapshot().kueue.target, "tpu-proj/c1");
  EXPECT_EQ(r->Snapshot().kueue.mode, "declared");
}

}  // namespace
}  // namespace tpu::daemon
