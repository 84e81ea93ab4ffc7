// End-to-end tests of a sharded `watch` (docs/scaling.md): three real
// processes share 30 targets through Leases in the Kubernetes API emulator,
// against one cloud emulator that records every call with the User-Agent of
// the replica that made it. A replica killed with SIGKILL has its targets
// taken over after its Leases expire, with no create made twice; restarted,
// it gets its share back; and no shard is ever held by two replicas, as the
// Lease history shows. A replica whose Lease renewals fail stops mutating
// before its Leases can expire, and the one that takes over converges.
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "daemon/kube_e2e_fixture.h"
#include "kube/resource.h"
#include "kube/timestamps.h"

namespace tpu::daemon {
namespace {

using namespace testing;
namespace res = kube::resources;

constexpr int kShards = 12;
constexpr int kLeaseSeconds = 4;
constexpr int kRenewSeconds = 3;

sim::CloudEmulatorOptions SlowOperations(int ms) {
  sim::CloudEmulatorOptions o;
  o.op_latency_ms = {{"default", ms}};
  return o;
}

// One recorded mutating call of the cloud emulator.
struct Call {
  std::string replica;  // from the User-Agent's "replica/NAME"
  std::string method, path, pool;
  int status = 0;
  int64_t time_ms = 0;
};

// Every Lease write the test saw, per Lease, in order.
struct LeaseEvent {
  std::string holder;
  WallTime acquire, renew;
};

// The shards a replica says it holds (none while it does not answer).
std::set<int> Held(DaemonProcess& d) {
  json s = d.Status();
  if (!s.is_object() || !s["shards"].is_object()) return {};
  auto held = s["shards"]["held"].get<std::vector<int>>();
  return {held.begin(), held.end()};
}

class ShardE2eTest : public KubeE2eFixture {
 protected:
  explicit ShardE2eTest(sim::CloudEmulatorOptions cloud = SlowOperations(300)) : KubeE2eFixture(std::move(cloud), Api()) {}

  kubesim::KubeApiServer::Options Api() {
    kubesim::KubeApiServer::Options o;
    o.history_limit = 100000;  // the Lease history of the whole test
    o.fail = [this](const std::string& method, const std::string& path, const std::string& body) {
      std::lock_guard<std::mutex> lock(fault_mu_);
      if (failing_holder_.empty() || path.find("/leases") == std::string::npos || method == "GET") return 0;
      return body.find("\"holderIdentity\":\"" + failing_holder_ + "\"") != std::string::npos ? 500 : 0;
    };
    return o;
  }

  void SetUp() override {
    KubeE2eFixture::SetUp();
    record_ = (tmp_.path() / "calls.jsonl").string();
    httplib::Client c("127.0.0.1", cloud_.emulator().port());
    auto r = c.Post("/sim/record", json{{"file", record_}}.dump(), "application/json");
    ASSERT_TRUE(r && r->status == 200);
    lease_watch_ = std::thread([this] { WatchLeases(); });
  }

  void TearDown() override {
    cancel_.Cancel();
    if (lease_watch_.joinable()) lease_watch_.join();
  }

  void WatchLeases() {
    kube::WatchOptions o;
    o.timeout_seconds = 600;
    o.cancel = &cancel_;
    (void)client_->Watch(res::kLeases, "default", o, [this](const kube::WatchEvent& e) {
      const std::string name = e.object["metadata"].value("name", "");
      if (name.find("-shard-") == std::string::npos || e.type == "BOOKMARK") return true;
      const json spec = e.object.value("spec", json::object());
      LeaseEvent ev;
      ev.holder = spec.value("holderIdentity", "");
      kube::ParseTime(spec.value("acquireTime", ""), &ev.acquire);
      kube::ParseTime(spec.value("renewTime", ""), &ev.renew);
      std::lock_guard<std::mutex> lock(leases_mu_);
      lease_history_[name].push_back(ev);
      return true;
    });
  }

  void WriteTargets(int targets, int slices) {
    for (int i = 0; i < targets; ++i) {
      const std::string c = "s" + std::to_string(i);
      ASSERT_TRUE(cloud_.emulator().EnsureCluster(kProject, kZone, c).ok());
      WriteFile(repo_ / ("deploy/" + std::string(kProject) + "/" + c + "/cluster.yaml"), ClusterYaml(c));
      WriteFile(repo_ / ("deploy/" + std::string(kProject) + "/" + c + "/pools.yaml"), PoolYaml("train", slices));
    }
  }

  std::unique_ptr<DaemonProcess> Replica(const std::string& name, const std::string& log = "") {
    return Start({"--shards", std::to_string(kShards), "--leader-elect-identity", name,
                  "--leader-elect-namespace", "default", "--leader-elect-lease-duration",
                  std::to_string(kLeaseSeconds) + "s", "--leader-elect-renew-deadline",
                  std::to_string(kRenewSeconds) + "s", "--leader-elect-retry-period", "500ms",
                  "--parallelism", "4"},
                 log.empty() ? name + ".log" : log);
  }

  // Every node-pool mutation the cloud emulator recorded.
  std::vector<Call> Mutations() {
    std::vector<Call> out;
    std::ifstream in(record_);
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line, nullptr, false);
      if (j.is_discarded() || j["method"] == "GET" || j["path"].get<std::string>().find("/nodePools") == std::string::npos)
        continue;
      Call c;
      const std::string ua = j.value("userAgent", "");
      auto at = ua.find("replica/");
      c.replica = at == std::string::npos ? "" : ua.substr(at + 8);
      c.method = j["method"];
      c.path = j["path"];
      c.status = j.value("status", 0);
      c.time_ms = j.value("timeMs", int64_t{0});
      if (j["request"].is_object() && j["request"].contains("nodePool"))
        c.pool = j["request"]["nodePool"].value("name", "");
      out.push_back(c);
    }
    return out;
  }

  // Successful creates per "cluster/pool", and by whom.
  std::map<std::string, std::vector<std::string>> Creates() {
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& c : Mutations()) {
      if (c.method != "POST" || c.pool.empty()) continue;
      auto at = c.path.find("/clusters/");
      std::string cluster = c.path.substr(at + 10, c.path.find('/', at + 10) - at - 10);
      if (c.status == 200) out[cluster + "/" + c.pool].push_back(c.replica);
      else ADD_FAILURE() << "create of " << cluster << "/" << c.pool << " by " << c.replica << " got " << c.status;
    }
    return out;
  }

  bool AllPools(int targets, int slices) {
    auto creates = Creates();
    for (int i = 0; i < targets; ++i)
      for (int s = 0; s < slices; ++s)
        if (!creates.count("s" + std::to_string(i) + "/train-" + std::to_string(s))) return false;
    return true;
  }


  // No shard changed hands from one live holder to another without the first
  // holder's Lease having expired (by its own timestamps) or been given back.
  void ExpectNoShardHeldTwice() {
    std::lock_guard<std::mutex> lock(leases_mu_);
    ASSERT_FALSE(lease_history_.empty());
    for (const auto& [name, events] : lease_history_) {
      for (size_t i = 1; i < events.size(); ++i) {
        const LeaseEvent& before = events[i - 1];
        const LeaseEvent& after = events[i];
        if (before.holder.empty() || after.holder.empty() || before.holder == after.holder) continue;
        EXPECT_GE(after.acquire - before.renew, std::chrono::seconds(kLeaseSeconds))
            << name << ": " << after.holder << " took it from " << before.holder << " before its lease expired";
      }
    }
  }

  std::string record_;
  http::CancelToken cancel_;
  std::thread lease_watch_;
  std::mutex leases_mu_;
  std::map<std::string, std::vector<LeaseEvent>> lease_history_;
  std::mutex fault_mu_;
  std::string failing_holder_;
};

using Replicas = std::map<std::string, std::unique_ptr<DaemonProcess>>;

// Every replica holds its fair share and together they hold every shard.
bool SharesSettled(Replicas& replicas, size_t each) {
  std::set<int> all;
  for (auto& [n, d] : replicas) {
    auto held = Held(*d);
    if (held.size() != each) return false;
    all.insert(held.begin(), held.end());
  }
  return all.size() == static_cast<size_t>(kShards);
}

// Target → the one replica that reports it, once every target has exactly
// one; empty if that does not happen in time.
std::map<std::string, std::string> Reporters(Replicas& replicas, size_t targets) {
  std::map<std::string, std::string> reported;
  bool settled = WaitUntil([&] {
    reported.clear();
    for (auto& [n, d] : replicas) {
      const json status = d->Status();  // kept: a range-for over a member of a temporary dangles
      if (!status.is_object()) return false;
      for (const auto& t : status["targets"])
        if (!reported.emplace(t["target"].get<std::string>(), n).second) return false;
    }
    return reported.size() == targets;
  });
  if (!settled) reported.clear();
  return reported;
}

long long MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
}

TEST_F(ShardE2eTest, ThreeReplicasShareThirtyTargetsTakeOverAndRebalance) {
  constexpr int kTargets = 30;
  WriteTargets(kTargets, 1);
  CommitAll(repo_, "thirty targets");
  Replicas replicas;
  for (const char* name : {"r0", "r1", "r2"}) replicas[name] = Replica(name);

  // Every target reconciled, each by exactly one replica; the shards split 4/4/4.
  ASSERT_TRUE(WaitUntil([&] { return AllPools(kTargets, 1); })) << replicas["r0"]->Log();
  ASSERT_TRUE(WaitUntil([&] { return SharesSettled(replicas, kShards / 3); }));
  for (const auto& [pool, by] : Creates()) ASSERT_EQ(by.size(), 1u) << pool << " created more than once";
  // Each target is reported by exactly one replica, its owner now. (A replica that starts a round
  // before the others may hold more than its share for a round, so a target's creator may have been
  // another, one after the other.)
  const std::map<std::string, std::string> owner = Reporters(replicas, kTargets);
  ASSERT_EQ(owner.size(), static_cast<size_t>(kTargets));
  std::map<std::string, int> spread;
  for (const auto& [target, by] : owner) spread[by]++;
  for (auto& [n, d] : replicas) {
    std::printf("targets of %s: %d\n", n.c_str(), spread[n]);
    EXPECT_EQ(d->Status()["shards"]["ownedTargets"], spread[n]) << n;
    const std::string metrics = d->Get("/metrics")->body;
    EXPECT_NE(metrics.find("tpu_provisioner_shards_held{identity=\"" + n + "\"} 4"), std::string::npos) << metrics;
  }

  // kill -9 the replica that holds shard 0 once it is creating second pools:
  // the others take its targets over, and nothing is created twice.
  std::string victim;
  for (auto& [n, d] : replicas)
    if (Held(*d).count(0)) victim = n;
  ASSERT_FALSE(victim.empty());
  WriteTargets(kTargets, 2);
  CommitAll(repo_, "a second pool everywhere");
  ASSERT_TRUE(WaitUntil([&] {
    for (const auto& c : Mutations())
      if (c.replica == victim && c.pool == "train-1") return true;
    return false;
  }));
  replicas[victim]->Signal(SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitUntil([&] {
    size_t held = 0;
    for (auto& [n, d] : replicas)
      if (n != victim) held += Held(*d).size();
    return held == static_cast<size_t>(kShards);
  }));
  std::printf("after kill -9: every shard held again in %lld ms (lease %d s)\n", MsSince(killed), kLeaseSeconds);
  ASSERT_TRUE(WaitUntil([&] { return AllPools(kTargets, 2); }));
  std::printf("after kill -9: all targets converged in %lld ms\n", MsSince(killed));
  int finished_by_others = 0;
  for (const auto& [pool, by] : Creates()) {
    EXPECT_EQ(by.size(), 1u) << pool << " created more than once";
    const std::string target = std::string(kProject) + "/" + pool.substr(0, pool.find('/'));
    if (owner.at(target) == victim && by[0] != victim) ++finished_by_others;
  }
  EXPECT_GT(finished_by_others, 0);
  int takeovers = 0;
  for (auto& [n, d] : replicas)
    if (n != victim) takeovers += d->Status()["shards"]["takeovers"].get<int>();
  EXPECT_EQ(takeovers, kShards / 3);

  // Restarted, it gets its fair share back, and no shard was ever held twice.
  replicas[victim] = Replica(victim, victim + "-restarted.log");  // a new log: the old one names the old port
  ASSERT_TRUE(WaitUntil([&] { return SharesSettled(replicas, kShards / 3); }));
  ExpectNoShardHeldTwice();
}

class ShardRenewalFailureTest : public ShardE2eTest {
 protected:
  ShardRenewalFailureTest() : ShardE2eTest(SlowOperations(1500)) {}
};

TEST_F(ShardRenewalFailureTest, AReplicaThatCannotRenewStopsMutatingBeforeItsLeaseExpires) {
  constexpr int kTargets = 10;
  WriteTargets(kTargets, 3);
  CommitAll(repo_, "ten targets, three pools each");
  auto a = Replica("a");
  auto b = Replica("b");
  ASSERT_TRUE(WaitUntil([&] { return Held(*a).size() == kShards / 2 && Held(*b).size() == kShards / 2; }));

  // Once `a` is applying, its Lease writes start failing with 500s.
  ASSERT_TRUE(WaitUntil([&] {
    for (const auto& c : Mutations())
      if (c.replica == "a") return true;
    return false;
  }));
  {
    std::lock_guard<std::mutex> lock(fault_mu_);
    failing_holder_ = "a";
  }
  // The emulator stamps calls by the same system clock.
  const int64_t fault_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch()).count();

  // `b` takes a's shards over once they expire, and everything converges.
  ASSERT_TRUE(WaitUntil([&] { return AllPools(kTargets, 3); })) << b->Log();
  ASSERT_TRUE(WaitUntil([&] { return Held(*b).size() == kShards; }));
  EXPECT_TRUE(Held(*a).empty());
  EXPECT_EQ(b->Status()["shards"]["takeovers"].get<int>(), kShards / 2);
  for (const auto& [pool, by] : Creates()) EXPECT_EQ(by.size(), 1u) << pool << " created more than once";
  // `a` made no mutating call once its Leases could have expired: its last
  // successful renew came before the fault, so it stopped by then + the renew
  // deadline, before then + the lease duration.
  for (const auto& c : Mutations()) {
    if (c.replica != "a") continue;
    EXPECT_LT(c.time_ms, fault_ms + kLeaseSeconds * 1000) << c.method << " " << c.path;
  }
  EXPECT_GT(a->Status()["shards"]["errors"].get<int>(), 0);
  ExpectNoShardHeldTwice();
}

}  // namespace
}  // namespace tpu::daemon
