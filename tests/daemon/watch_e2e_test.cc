// End-to-end tests of `tpu-provisioner watch` (issue 6, "Must show"): the real
// binary, a real git repository made here, and the cloud emulator in this
// process. Every wait polls /status (or the emulator) with a deadline.
#include <openssl/hmac.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "daemon/daemon_fixture.h"
#include "daemon/daemon_process.h"

namespace tpu::daemon {
namespace {

using namespace testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string HubSignature(const std::string& secret, const std::string& body) {
  unsigned char mac[32];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(body.data()), body.size(), mac, &len);
  static const char kHex[] = "0123456789abcdef";
  std::string out = "sha256=";
  for (unsigned i = 0; i < len; ++i) {
    out += kHex[mac[i] >> 4];
    out += kHex[mac[i] & 15];
  }
  return out;
}

class WatchE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_ = tmp_.path() / "repo";
    InitRepo(repo_);
    WriteFile(repo_ / "deploy/tpu-proj/c1/cluster.yaml", ClusterYaml("c1"));
    WriteFile(repo_ / "deploy/tpu-proj/c2/cluster.yaml", ClusterYaml("c2"));
  }

  std::unique_ptr<DaemonProcess> Start(std::vector<std::string> args) {
    return std::make_unique<DaemonProcess>(std::move(args), (tmp_.path() / "daemon.log").string(),
                                           cloud_.emulator().endpoint(), metadata_.host());
  }

  // Until /status shows `revision` reconciled and `pred` holds for target `key`.
  bool WaitTarget(DaemonProcess& d, const std::string& revision, const std::string& key,
                  const std::function<bool(const json&)>& pred) {
    return WaitUntil([&] {
      json s = d.Status();
      if (!s.is_object() || s["revision"] != revision) return false;
      for (const auto& t : s["targets"])
        if (t["target"] == key) return pred(t);
      return false;
    });
  }

  TempDir tmp_;
  fs::path repo_;
  CloudFixture cloud_;
  test_support::MetadataServer metadata_;
};

TEST_F(WatchE2eTest, CommitsAppliedBrokenTargetBlockedRevertConvergesSigtermExitsCleanly) {
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  WriteFile(repo_ / "deploy/tpu-proj/c2/pools.yaml", PoolYaml("serve", 1));
  std::string head = CommitAll(repo_, "first");
  auto d = Start({"--repo", repo_.string(), "--log-format", "json"});
  ASSERT_NE(d->Port(), 0) << d->Log();

  ASSERT_TRUE(WaitTarget(*d, head, "tpu-proj/c1", [](const json& t) { return t["liveChips"] == 4; }));
  EXPECT_EQ(cloud_.Pools("c1").count("train-0"), 1u);
  EXPECT_EQ(d->Get("/healthz")->status, 200);
  EXPECT_EQ(d->Get("/readyz")->status, 200);

  // A commit is applied.
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  head = CommitAll(repo_, "grow c1");
  ASSERT_TRUE(WaitTarget(*d, head, "tpu-proj/c1", [](const json& t) {
    return t["liveChips"] == 8 && t["state"] == "in-sync";
  })) << d->Status().dump(2);
  EXPECT_EQ(cloud_.Pools("c1").size(), 2u);

  // A broken manifest blocks only its target, and /status says why.
  WriteFile(repo_ / "deploy/tpu-proj/c2/pools.yaml", PoolYaml("serve", 2, "3x3"));
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 3));
  head = CommitAll(repo_, "break c2, grow c1");
  ASSERT_TRUE(WaitTarget(*d, head, "tpu-proj/c2", [](const json& t) { return t["state"] == "blocked"; }))
      << d->Status().dump(2);
  json c2 = d->Target("tpu-proj/c2");
  ASSERT_FALSE(c2["errors"].empty());
  EXPECT_NE(c2["errors"][0].get<std::string>().find("deploy/tpu-proj/c2/pools.yaml:"), std::string::npos)
      << c2.dump(2);
  ASSERT_TRUE(WaitTarget(*d, head, "tpu-proj/c1", [](const json& t) { return t["liveChips"] == 12; }));
  EXPECT_EQ(cloud_.Pools("c2").size(), 1u);

  // Revert: converges.
  Git(repo_, "revert --no-edit HEAD");
  head = Git(repo_, "rev-parse HEAD");
  ASSERT_TRUE(WaitTarget(*d, head, "tpu-proj/c2", [](const json& t) { return t["state"] == "in-sync"; }));
  ASSERT_TRUE(WaitTarget(*d, head, "tpu-proj/c1", [](const json& t) { return t["liveChips"] == 8; }));

  // Metrics in the tpu_provisioner_ namespace.
  std::string metrics = d->Get("/metrics")->body;
  for (const char* m : {"tpu_provisioner_reconcile_duration_seconds_count ",
                        "tpu_provisioner_plan_actions_total{kind=\"create\"} ",
                        "tpu_provisioner_api_calls_total{method=\"GET\",code=\"200\"} ",
                        "tpu_provisioner_operations_in_flight ",
                        "tpu_provisioner_declared_chips{target=\"tpu-proj/c1\"} 8",
                        "tpu_provisioner_live_chips{target=\"tpu-proj/c1\"} 8",
                        "tpu_provisioner_files_parsed_total "})
    EXPECT_NE(metrics.find(m), std::string::npos) << m << "\n" << metrics;
  EXPECT_NE(metrics.find("tpu_provisioner_last_applied_revision{revision=\"" + head + "\"} 1"),
            std::string::npos);

  // SIGTERM: a clean exit, status 0.
  d->Signal(SIGTERM);
  auto status = d->WaitExit();
  ASSERT_TRUE(status.has_value()) << "still running after SIGTERM";
  EXPECT_TRUE(WIFEXITED(*status)) << *status;
  EXPECT_EQ(WEXITSTATUS(*status), 0);

  // Every log line is a JSON object; reconciles are logged one line each.
  std::istringstream log(d->Log());
  int reconcile_lines = 0;
  for (std::string line; std::getline(log, line);) {
    json j = json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << line;
    if (j["msg"].get<std::string>().rfind("reconcile revision=", 0) == 0) ++reconcile_lines;
  }
  EXPECT_GE(reconcile_lines, 4);
}

TEST_F(WatchE2eTest, ForcePushIsReported) {
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  const std::string a = CommitAll(repo_, "a");
  auto d = Start({"--repo", repo_.string()});
  ASSERT_TRUE(WaitTarget(*d, a, "tpu-proj/c1", [](const json& t) { return t["liveChips"] == 4; }));
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  const std::string b = CommitAll(repo_, "b");
  ASSERT_TRUE(WaitTarget(*d, b, "tpu-proj/c1", [](const json& t) { return t["liveChips"] == 8; }));

  // c: a child of a, not of b. Built beside HEAD and switched to in one
  // move, so the daemon never sees HEAD at a on the way.
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 3));
  Git(repo_, "add -A");
  const std::string tree = Git(repo_, "write-tree");
  const std::string c = Git(repo_, "commit-tree " + tree + " -p " + a + " -m rewritten");
  Git(repo_, "reset -q --hard " + c);
  ASSERT_TRUE(WaitUntil([&] {
    json s = d->Status();
    return s.is_object() && s["historyRewrite"].is_object() && s["historyRewrite"]["to"] == c;
  })) << d->Status().dump(2);
  json s = d->Status();
  EXPECT_EQ(s["historyRewrite"]["from"], b);
  EXPECT_TRUE(WaitUntil([&] { return d->Log().find("history rewrite") != std::string::npos; }));
  EXPECT_NE(d->Get("/metrics")->body.find("tpu_provisioner_history_rewrites_total 1"), std::string::npos);
}

TEST_F(WatchE2eTest, AForcePushWhileStoppedIsReportedAfterARestart) {
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  const std::string a = CommitAll(repo_, "a");
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  const std::string b = CommitAll(repo_, "b");
  {
    auto d = Start({"--repo", repo_.string()});
    ASSERT_TRUE(WaitTarget(*d, b, "tpu-proj/c1", [](const json& t) { return t["liveChips"] == 8; }));
    d->Signal(SIGTERM);
    ASSERT_TRUE(d->WaitExit().has_value());
  }
  // Rewritten while no daemon runs.
  Git(repo_, "reset -q --hard " + a);
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 3));
  const std::string c = CommitAll(repo_, "c, rewritten");

  fs::remove(tmp_.path() / "daemon.log");  // else the first run's "listening on" line could be read
  auto d = Start({"--repo", repo_.string()});
  ASSERT_TRUE(WaitUntil([&] {
    json s = d->Status();
    return s.is_object() && s["historyRewrite"].is_object() && s["historyRewrite"]["to"] == c;
  })) << d->Log();
  EXPECT_EQ(d->Status()["historyRewrite"]["from"], b);
  EXPECT_TRUE(WaitUntil([&] { return d->Log().find("history rewrite") != std::string::npos; }));
}

TEST_F(WatchE2eTest, RefuseHistoryRewriteHoldsUntilSighup) {
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  const std::string a = CommitAll(repo_, "a");
  auto d = Start({"--repo", repo_.string(), "--refuse-history-rewrite"});
  ASSERT_TRUE(WaitTarget(*d, a, "tpu-proj/c1", [](const json& t) { return t["liveChips"] == 4; }));
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  const std::string b = CommitAll(repo_, "b");
  ASSERT_TRUE(WaitTarget(*d, b, "tpu-proj/c1", [](const json& t) { return t["liveChips"] == 8; }));

  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 3));
  Git(repo_, "add -A");
  const std::string tree = Git(repo_, "write-tree");
  const std::string c = Git(repo_, "commit-tree " + tree + " -p " + a + " -m rewritten");
  Git(repo_, "reset -q --hard " + c);
  ASSERT_TRUE(WaitUntil([&] {
    json s = d->Status();
    return s.is_object() && s["historyRewrite"].is_object() && s["historyRewrite"]["to"] == c &&
           s["historyRewrite"]["held"] == true;
  })) << d->Status().dump(2);
  EXPECT_EQ(d->Status()["revision"], b);
  EXPECT_EQ(cloud_.Pools("c1").size(), 2u);

  d->Signal(SIGHUP);  // accept the rewrite
  ASSERT_TRUE(WaitTarget(*d, c, "tpu-proj/c1", [](const json& t) { return t["liveChips"] == 12; }))
      << d->Log();
}

TEST_F(WatchE2eTest, SignedWebhookTriggersAFetchUnsignedIsRefused) {
  // A bare "remote" the daemon clones, fed from the checkout by git push.
  fs::path origin = tmp_.path() / "origin.git";
  Git(tmp_.path(), "init -q --bare -b main " + origin.string());
  Git(repo_, "remote add origin " + origin.string());
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  const std::string first = CommitAll(repo_, "first");
  Git(repo_, "push -q origin main");
  const std::string secret = "webhook-secret-for-tests";
  fs::path secret_file = tmp_.path() / "secret";
  std::ofstream(secret_file) << secret << "\n";

  auto d = Start({"--repo", "file://" + origin.string(), "--ref", "main", "--workdir",
                  (tmp_.path() / "clone").string(), "--poll-interval", "1h", "--webhook-secret-file",
                  secret_file.string()});
  ASSERT_TRUE(WaitTarget(*d, first, "tpu-proj/c1", [](const json& t) { return t["liveChips"] == 4; }))
      << d->Log();

  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  const std::string second = CommitAll(repo_, "second");
  Git(repo_, "push -q origin main");

  httplib::Client client("127.0.0.1", d->Port());
  const std::string body = R"({"ref":"refs/heads/main"})";
  // Unsigned, and badly signed: 401, and nothing fetched.
  auto unsigned_call = client.Post("/hooks/git", body, "application/json");
  ASSERT_TRUE(unsigned_call);
  EXPECT_EQ(unsigned_call->status, 401);
  httplib::Headers bad = {{"X-Hub-Signature-256", HubSignature("wrong secret", body)}};
  auto bad_call = client.Post("/hooks/git", bad, body, "application/json");
  EXPECT_EQ(bad_call->status, 401);
  std::string metrics = d->Get("/metrics")->body;
  EXPECT_NE(metrics.find("tpu_provisioner_fetches_total{result=\"ok\"} 1\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("tpu_provisioner_webhook_requests_total{result=\"unauthorized\"} 2"),
            std::string::npos);
  EXPECT_EQ(d->Status()["revision"], first);
  // Signed but without a delivery id: it could be replayed at will, so refused.
  httplib::Headers no_id = {{"X-Hub-Signature-256", HubSignature(secret, body)}};
  auto no_id_call = client.Post("/hooks/git", no_id, body, "application/json");
  ASSERT_TRUE(no_id_call);
  EXPECT_EQ(no_id_call->status, 401);
  EXPECT_NE(no_id_call->body.find("no delivery id"), std::string::npos) << no_id_call->body;
  metrics = d->Get("/metrics")->body;
  EXPECT_NE(metrics.find("tpu_provisioner_webhook_requests_total{result=\"no-delivery-id\"} 1"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("tpu_provisioner_fetches_total{result=\"ok\"} 1\n"), std::string::npos) << metrics;

  // Signed: 202, fetched at once (the poll interval is an hour), applied.
  httplib::Headers good = {{"X-Hub-Signature-256", HubSignature(secret, body)},
                           {"X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958"}};
  auto good_call = client.Post("/hooks/git", good, body, "application/json");
  ASSERT_TRUE(good_call);
  EXPECT_EQ(good_call->status, 202);
  ASSERT_TRUE(WaitTarget(*d, second, "tpu-proj/c1", [](const json& t) { return t["liveChips"] == 8; }))
      << d->Status().dump(2);
  // The same delivery again is a replay.
  EXPECT_EQ(client.Post("/hooks/git", good, body, "application/json")->status, 401);
  // Gitea's form (bare hex HMAC, its own delivery header) is accepted too.
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 3));
  const std::string third = CommitAll(repo_, "third");
  Git(repo_, "push -q origin main");
  httplib::Headers gitea = {{"X-Gitea-Signature", HubSignature(secret, body).substr(7)},
                            {"X-Gitea-Delivery", "f6266f16-1bf3-46a5-9ea4-602e06ead473"}};
  EXPECT_EQ(client.Post("/hooks/git", gitea, body, "application/json")->status, 202);
  ASSERT_TRUE(WaitTarget(*d, third, "tpu-proj/c1", [](const json& t) { return t["liveChips"] == 12; }))
      << d->Status().dump(2);
  EXPECT_EQ(d->Log().find(secret), std::string::npos);  // never logged
}

TEST_F(WatchE2eTest, DriftInTheEmulatorIsCorrectedAtTheNextDriftCheck) {
  WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  const std::string head = CommitAll(repo_, "two slices");
  auto d = Start({"--repo", repo_.string(), "--drift-interval", "1s"});
  ASSERT_TRUE(WaitTarget(*d, head, "tpu-proj/c1", [](const json& t) { return t["liveChips"] == 8; }));

  // Behind the daemon's back, straight through the API.
  cloud::NodePoolRef ref{{kProject, kZone, "c1"}, "train-1"};
  ASSERT_TRUE(cloud_.connection().gke().DeleteNodePool(ref).ok());
  ASSERT_TRUE(WaitUntil([&] { return cloud_.Pools("c1").count("train-1") == 0; }));
  // The next drift check puts it back.
  ASSERT_TRUE(WaitUntil([&] { return cloud_.Pools("c1").count("train-1") == 1; })) << d->Log();
  ASSERT_TRUE(WaitTarget(*d, head, "tpu-proj/c1", [](const json& t) { return t["liveChips"] == 8; }));
}

TEST_F(WatchE2eTest, OneFileCommitInAHundredsOfFilesRepoParsesOneFile) {
  for (int i = 0; i < 300; ++i)
    WriteFile(repo_ / ("deploy/tpu-proj/" + std::string(i % 2 ? "c1" : "c2") + "/p" + std::to_string(i) + ".yaml"),
              PoolYaml("p" + std::to_string(i)));
  const std::string first = CommitAll(repo_, "300 pools");
  // Dry run: the files matter here, not 300 creates.
  auto d = Start({"--repo", repo_.string(), "--dry-run"});
  ASSERT_TRUE(WaitTarget(*d, first, "tpu-proj/c1", [](const json& t) { return t["state"] == "pending"; }));
  auto parsed = [&] {
    std::string m = d->Get("/metrics")->body;
    const std::string key = "\ntpu_provisioner_files_parsed_total ";
    size_t at = m.find(key);
    return at == std::string::npos ? -1 : std::stoi(m.substr(at + key.size()));
  };
  EXPECT_EQ(parsed(), 302);  // 300 pools + 2 cluster.yaml

  WriteFile(repo_ / "deploy/tpu-proj/c1/p7.yaml", PoolYaml("p7", 2));
  const std::string second = CommitAll(repo_, "one file");
  ASSERT_TRUE(WaitTarget(*d, second, "tpu-proj/c1", [&](const json& t) { return t["revision"] == second; }));
  EXPECT_EQ(parsed(), 303);
  EXPECT_EQ(cloud_.emulator().counters().mutating_calls, 0);
}

// SIGTERM in the middle of an apply: exit 0 at once, and the next run finds
// the operation left running, waits for it, and converges without duplicates.
TEST(WatchE2eShutdownTest, SigtermDuringAnApplyExitsCleanlyAndTheNextRunConverges) {
  TempDir tmp;
  fs::path repo = tmp.path() / "repo";
  InitRepo(repo);
  WriteFile(repo / "deploy/tpu-proj/c1/cluster.yaml", ClusterYaml("c1"));
  WriteFile(repo / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 2));
  const std::string head = CommitAll(repo, "two slices");
  sim::CloudEmulatorOptions slow = FastEmulatorOptions();
  slow.op_latency_ms = {{"default", 5}, {"CREATE_NODE_POOL", 3000}};
  CloudFixture cloud(slow);
  test_support::MetadataServer metadata;
  auto start = [&](const std::string& log) {
    return std::make_unique<DaemonProcess>(std::vector<std::string>{"--repo", repo.string()},
                                           (tmp.path() / log).string(), cloud.emulator().endpoint(),
                                           metadata.host());
  };
  {
    auto d = start("first.log");
    ASSERT_TRUE(WaitUntil([&] { return !cloud.Pools("c1").empty(); })) << d->Log();
    d->Signal(SIGTERM);
    auto status = d->WaitExit();
    ASSERT_TRUE(status.has_value()) << "still running after SIGTERM";
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << *status;
  }
  auto d = start("second.log");
  ASSERT_TRUE(WaitUntil([&] {
    json t = d->Target("tpu-proj/c1");
    return t.is_object() && t["liveChips"] == 8 && t["state"] == "in-sync" && t["revision"] == head;
  })) << d->Log();
  EXPECT_EQ((cloud.Pools("c1")), (std::map<std::string, int>{{"train-0", 1}, {"train-1", 1}}));
}

}  // namespace
}  // namespace tpu::daemon
