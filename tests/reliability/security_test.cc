// Security promises, against the real binary:
//   - no credential (cloud access token, refresh token, client secret,
//     service-account private key, git token, webhook secret) in logs at any
//     level (SPDLOG_LEVEL=trace logs everything), in /status, /metrics, or an
//     error message;
//   - TLS is verified, loopback included, unless --insecure-skip-tls-verify,
//     which logs a warning; plain http goes only to loopback;
//   - the webhook rejects bad signatures, tampered bodies and replays;
//   - `plan` and `watch --dry-run` make zero mutating calls under every fault.
#include <netinet/in.h>
#include <sys/socket.h>

#include <regex>

#include <openssl/hmac.h>

#include "cloud/test_keys.h"
#include "metadata_server.h"
#include "reliability/capacity_stages.h"
#include "reliability/reconcile_rounds.h"

namespace tpu::reliability {
namespace {

using daemon::testing::DaemonProcess;
using source::testing::CommitAll;
using source::testing::Git;
using source::testing::WriteFile;

// Every secret is distinctive, so a leak of any part of it is found.
constexpr const char* kAccessToken = "ya29.SECRET-ACCESS-TOKEN-7f3a";
constexpr const char* kRefreshToken = "1//SECRET-REFRESH-TOKEN-91bc";
constexpr const char* kClientSecret = "SECRET-CLIENT-SECRET-44d0";
constexpr const char* kGitToken = "ghp_SECRETGITTOKEN5e6f";
constexpr const char* kWebhookSecret = "SECRET-WEBHOOK-0c1d";

std::string HubSignature(const std::string& secret, const std::string& body) {
  unsigned char mac[32];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(body.data()), body.size(), mac, &len);
  static const char kHex[] = "0123456789abcdef";
  std::string out = "sha256=";
  for (unsigned i = 0; i < len; ++i) out += std::string{kHex[mac[i] >> 4], kHex[mac[i] & 15]};
  return out;
}

// Fails the test when `text` (named `where`) holds any of `secrets`.
void ExpectNoSecret(const std::string& text, const std::string& where, const std::vector<std::string>& secrets) {
  for (const auto& s : secrets) EXPECT_EQ(text.find(s), std::string::npos) << s << " leaked into " << where;
}

// An OAuth token endpoint on loopback: grants kAccessToken, or refuses every grant.
class TokenServer {
 public:
  explicit TokenServer(bool grant) {
    server_.Post("/token", [grant](const httplib::Request&, httplib::Response& res) {
      if (grant) {
        res.set_content(std::string(R"({"access_token":")") + kAccessToken +
                            R"(","expires_in":3600,"token_type":"Bearer"})",
                        "application/json");
      } else {
        res.status = 400;
        res.set_content(R"({"error":"invalid_grant","error_description":"Bad Request"})", "application/json");
      }
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~TokenServer() {
    WaitUntil([&] { return server_.is_running(); });
    server_.stop();
    thread_.join();
  }
  std::string uri() const { return "http://127.0.0.1:" + std::to_string(port_) + "/token"; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

class SecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_ = tmp_.path() / "repo";
    source::testing::InitRepo(repo_);
    const Stage stage = CapacityStages(false)[0];
    for (const auto& [path, text] : stage.files) WriteFile(repo_ / path, text);
    head_ = CommitAll(repo_, "stage 0");
  }

  void StartEmulator(const std::string& token) {
    sim::CloudEmulatorOptions o;
    o.op_latency_ms = {{"default", 5}};
    o.required_token = token;
    emu_ = std::make_unique<sim::CloudEmulator>(o);
    ASSERT_TRUE(emu_->Start().ok());
    ASSERT_TRUE(emu_->EnsureCluster(kProject, kGkeRegion, "gke").ok());
  }

  std::vector<std::string> Cloud() const {
    return {"--gke-endpoint", emu_->endpoint() + "/", "--compute-endpoint", emu_->endpoint() + "/"};
  }

  // The environment of a child using Application Default Credentials from `key_json`.
  std::vector<std::string> AdcEnv(const std::string& key_json, const std::string& level) {
    const fs::path key = tmp_.path() / ("adc-" + std::to_string(++files_) + ".json");
    WriteFile(key, key_json);
    return ChildEnvironment("", {"GOOGLE_APPLICATION_CREDENTIALS=" + key.string(), "SPDLOG_LEVEL=" + level,
                                 "GCE_METADATA_HOST=127.0.0.1:1"});
  }

  std::string AuthorizedUser(const std::string& token_uri) {
    return json{{"type", "authorized_user"}, {"client_id", "client-1.apps.googleusercontent.com"},
                {"client_secret", kClientSecret}, {"refresh_token", kRefreshToken}, {"token_uri", token_uri}}
        .dump();
  }

  int RunBinary(const std::vector<std::string>& args, const std::vector<std::string>& env, std::string* out) {
    BinaryProcess p(args, env, tmp_.path() / ("run-" + std::to_string(++files_) + ".log"));
    int rc = p.Wait();
    *out = p.Output();
    return rc;
  }

  TempDir tmp_;
  fs::path repo_;
  std::string head_;
  int files_ = 0;
  std::unique_ptr<sim::CloudEmulator> emu_;
};

// plan and apply with each kind of cloud credential, at every log level,
// succeeding and failing: the output never holds the credential.
TEST_F(SecurityTest, CloudCredentialsNeverInLogsOrErrors) {
  TokenServer granting(true), refusing(false);
  const std::string private_key_body = [] {
    // A line from the middle of the PEM: any fragment of the key counts.
    std::istringstream in(cloud::testing::SharedTestKeys().private_pem);
    std::string line;
    for (int i = 0; i < 5; ++i) std::getline(in, line);
    return line;
  }();
  const std::vector<std::string> secrets = {kAccessToken, kRefreshToken, kClientSecret, private_key_body};
  StartEmulator(kAccessToken);
  int runs = 0;
  for (const char* level : {"trace", "debug", "info"}) {
    std::string out;
    // authorized_user → token: apply succeeds.
    std::vector<std::string> apply = {"apply", "--repo", repo_.string(), "--auto-approve", "--poll-initial-ms", "10"};
    auto c = Cloud();
    apply.insert(apply.end(), c.begin(), c.end());
    EXPECT_EQ(RunBinary(apply, AdcEnv(AuthorizedUser(granting.uri()), level), &out), 0) << out;
    ExpectNoSecret(out, std::string("apply output at ") + level, secrets);
    // service account → JWT grant → token: plan succeeds.
    std::vector<std::string> plan = {"plan", "--repo", repo_.string()};
    plan.insert(plan.end(), c.begin(), c.end());
    EXPECT_EQ(RunBinary(plan, AdcEnv(cloud::testing::ServiceAccountJson(cloud::testing::SharedTestKeys(), granting.uri()), level), &out), 0) << out;
    ExpectNoSecret(out, std::string("plan output at ") + level, secrets);
    // The token endpoint refuses the grant: an error that names no secret.
    EXPECT_EQ(RunBinary(plan, AdcEnv(AuthorizedUser(refusing.uri()), level), &out), 1) << out;
    EXPECT_NE(out.find("invalid_grant"), std::string::npos) << out;
    ExpectNoSecret(out, std::string("a refused grant's error at ") + level, secrets);
    runs += 3;
  }
  // The cloud refuses the token (401): the error names no token either.
  emu_->Stop();
  StartEmulator("some-other-token");
  std::string out;
  std::vector<std::string> plan = {"plan", "--repo", repo_.string()};
  auto c = Cloud();
  plan.insert(plan.end(), c.begin(), c.end());
  EXPECT_EQ(RunBinary(plan, AdcEnv(AuthorizedUser(granting.uri()), "trace"), &out), 1) << out;
  EXPECT_NE(out.find("401"), std::string::npos) << out;
  ExpectNoSecret(out, "a 401's error", secrets);
  RecordProperty("runs", runs + 1);
}

// The daemon at trace level with a webhook secret, a git token and cloud
// credentials: logs, /status and /metrics hold none of them; the webhook
// refuses unsigned, badly signed, tampered and replayed calls.
TEST_F(SecurityTest, DaemonSecretsNeverExposedAndWebhookRefusesForgeries) {
  TokenServer granting(true);
  StartEmulator(kAccessToken);
  const fs::path origin = tmp_.path() / "origin.git";
  Git(tmp_.path(), "init -q --bare -b main " + origin.string());
  Git(repo_, "remote add origin " + origin.string());
  Git(repo_, "push -q origin main");
  WriteFile(tmp_.path() / "webhook-secret", std::string(kWebhookSecret) + "\n");
  WriteFile(tmp_.path() / "git-token", std::string(kGitToken) + "\n");
  std::vector<std::string> args = {"watch", "--listen", "127.0.0.1:0", "--repo", "file://" + origin.string(),
                                   "--ref", "main", "--workdir", (tmp_.path() / "clone").string(),
                                   "--poll-interval", "1h", "--webhook-secret-file",
                                   (tmp_.path() / "webhook-secret").string(), "--git-token-file",
                                   (tmp_.path() / "git-token").string()};
  auto c = Cloud();
  args.insert(args.end(), c.begin(), c.end());
  const fs::path log = tmp_.path() / "watch.log";
  BinaryProcess watch(args, AdcEnv(AuthorizedUser(granting.uri()), "trace"), log);
  int port = 0;
  ASSERT_TRUE(WaitUntil([&] {
    std::smatch m;
    std::string text = ReadAll(log);
    static const std::regex re("listening on 127\\.0\\.0\\.1:([0-9]+)");
    if (std::regex_search(text, m, re)) port = std::stoi(m[1]);
    return port != 0 || watch.Done();
  }));
  ASSERT_NE(port, 0) << ReadAll(log);
  httplib::Client client("127.0.0.1", port);
  auto status = [&] {
    auto r = client.Get("/status");
    return r && r->status == 200 ? json::parse(r->body, nullptr, false) : json();
  };
  ASSERT_TRUE(WaitUntil([&] {
    json s = status();
    return s.is_object() && s["revision"] == head_ && s["ready"] == true;
  })) << ReadAll(log);

  const std::string body = R"({"ref":"refs/heads/main"})";
  const std::string good = HubSignature(kWebhookSecret, body);
  auto post = [&](const httplib::Headers& h, const std::string& b) {
    auto r = client.Post("/hooks/git", h, b, "application/json");
    return r ? r->status : -1;
  };
  EXPECT_EQ(post({}, body), 401) << "unsigned";
  EXPECT_EQ(post({{"X-Hub-Signature-256", HubSignature("guessed", body)}}, body), 401) << "wrong secret";
  EXPECT_EQ(post({{"X-Hub-Signature-256", "sha256=zz"}}, body), 401) << "malformed signature";
  EXPECT_EQ(post({{"X-Hub-Signature-256", good}, {"X-GitHub-Delivery", "d-1"}}, body + " "), 401) << "tampered body";
  EXPECT_EQ(post({{"X-Hub-Signature-256", good}, {"X-GitHub-Delivery", "d-1"}}, body), 202) << "genuine";
  EXPECT_EQ(post({{"X-Hub-Signature-256", good}, {"X-GitHub-Delivery", "d-1"}}, body), 401) << "replayed";
  std::string metrics = client.Get("/metrics")->body;
  EXPECT_NE(metrics.find("tpu_provisioner_webhook_requests_total{result=\"unauthorized\"} 4"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("tpu_provisioner_webhook_requests_total{result=\"replayed\"} 1"), std::string::npos)
      << metrics;

  const std::vector<std::string> secrets = {kAccessToken, kRefreshToken, kClientSecret, kGitToken, kWebhookSecret};
  ExpectNoSecret(status().dump(), "/status", secrets);
  ExpectNoSecret(metrics, "/metrics", secrets);
  watch.Kill();
  ExpectNoSecret(ReadAll(log), "the trace-level log", secrets);
}

// A git token sent to a server that refuses it: the error in /status and the
// log name the remote, never the token.
TEST_F(SecurityTest, RefusedGitTokenNeverInTheError) {
  httplib::Server git;
  git.Get(".*", [](const httplib::Request&, httplib::Response& res) {
    res.status = 401;
    res.set_header("WWW-Authenticate", "Basic realm=\"git\"");
  });
  const int git_port = git.bind_to_any_port("127.0.0.1");
  std::thread git_thread([&] { git.listen_after_bind(); });
  StartEmulator("");
  WriteFile(tmp_.path() / "git-token", std::string(kGitToken) + "\n");
  std::vector<std::string> args = {"--repo", "http://127.0.0.1:" + std::to_string(git_port) + "/capacity.git",
                                   "--ref", "main", "--workdir", (tmp_.path() / "clone").string(),
                                   "--git-token-file", (tmp_.path() / "git-token").string()};
  test_support::MetadataServer metadata;
  const fs::path log = tmp_.path() / "watch.log";
  struct Stop {
    httplib::Server& s;
    std::thread& t;
    ~Stop() { s.stop(); t.join(); }
  } stop{git, git_thread};
  {
    DaemonProcess d(args, log.string(), emu_->endpoint(), metadata.host());
    ASSERT_TRUE(WaitUntil([&] {
      std::string text = d.Log();
      return text.find("was refused") != std::string::npos || d.Exited();
    })) << d.Log();
    std::string text = d.Log();
    EXPECT_NE(text.find("127.0.0.1:" + std::to_string(git_port)), std::string::npos) << text;
    ExpectNoSecret(text, "the log of a refused git token", {kGitToken});
    if (!d.Exited()) {
      auto s = d.Status();
      ExpectNoSecret(s.dump(), "/status", {kGitToken});
    }
  }
}

// A free loopback port (bound, then released).
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t n = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  close(fd);
  return ntohs(a.sin_port);
}

// TLS is verified even on loopback; only the explicit flag turns it off, with
// a warning; plain http to a non-loopback host is refused without it.
TEST_F(SecurityTest, TlsVerificationOffOnlyWithTheFlagAndAWarning) {
  std::string out;
  const std::vector<std::string> plan = {"plan", "--repo", repo_.string()};
  // Plain http to a remote host: refused before any connection.
  std::vector<std::string> remote = plan;
  remote.insert(remote.end(), {"--gke-endpoint", "http://203.0.113.7/", "--compute-endpoint", "http://203.0.113.7/"});
  TokenServer granting(true);
  const std::vector<std::string> env_token = AdcEnv(AuthorizedUser(granting.uri()), "info");
  EXPECT_EQ(RunBinary(remote, env_token, &out), 1) << out;
  EXPECT_NE(out.find("refusing plain http to non-loopback host 203.0.113.7"), std::string::npos) << out;

  // A self-signed TLS server on loopback (openssl s_server).
  const fs::path key = tmp_.path() / "key.pem", cert = tmp_.path() / "cert.pem";
  source::testing::Sh("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -keyout " +
                      key.string() + " -out " + cert.string() + " 2>/dev/null");
  const int port = FreePort();
  pid_t server = fork();
  if (server == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    execlp("openssl", "openssl", "s_server", "-quiet", "-www", "-accept", std::to_string(port).c_str(), "-cert",
           cert.c_str(), "-key", key.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const std::string tls = "https://127.0.0.1:" + std::to_string(port) + "/";
  std::vector<std::string> verified = plan;
  verified.insert(verified.end(), {"--gke-endpoint", tls, "--compute-endpoint", tls});
  int rc = 0;
  // The server may take a moment to listen: retry while the connection is refused.
  WaitUntil([&] {
    rc = RunBinary(verified, env_token, &out);
    return out.find("onnect") == std::string::npos || out.find("certificate") != std::string::npos;
  }, std::chrono::seconds(20));
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("certificate"), std::string::npos) << "expected a certificate error\n" << out;
  EXPECT_EQ(out.find("TLS verification is OFF"), std::string::npos) << out;

  std::vector<std::string> insecure = verified;
  insecure.push_back("--insecure-skip-tls-verify");
  RunBinary(insecure, env_token, &out);
  EXPECT_NE(out.find("TLS verification is OFF"), std::string::npos) << out;
  EXPECT_NE(out.find("(--insecure-skip-tls-verify)"), std::string::npos) << "the warning names the flag\n" << out;
  EXPECT_EQ(out.find("certificate"), std::string::npos) << "the flag turns verification off\n" << out;
  kill(server, SIGKILL);
  waitpid(server, nullptr, 0);
}

// plan and watch --dry-run under every fault the emulator injects, at 30 % of
// every call: zero mutating calls, while there is plenty to change.
TEST_F(SecurityTest, PlanAndDryRunNeverMutateUnderAnyFault) {
  StartEmulator("");
  // Live at stage 0, the repo at stage 2: creates, updates, resizes and replaces pending.
  {
    InProcessReconciler r(repo_, emu_->endpoint());
    for (int i = 0; i < 5 && r.Run().had_changes;) ++i;
  }
  const Stage later = CapacityStages(false)[2];
  fs::remove_all(repo_ / "deploy");
  for (const auto& [path, text] : later.files) WriteFile(repo_ / path, text);
  const std::string head = CommitAll(repo_, "stage 2");
  test_support::MetadataServer metadata;
  const std::vector<std::pair<std::string, std::function<void(sim::FaultRule&)>>> faults = {
      {"429", [](sim::FaultRule& r) { r.rate_429 = 0.3; }},
      {"500", [](sim::FaultRule& r) { r.rate_500 = 0.3; }},
      {"503", [](sim::FaultRule& r) { r.rate_503 = 0.3; }},
      {"drop", [](sim::FaultRule& r) { r.rate_drop = 0.3; }},
      {"slow", [](sim::FaultRule& r) { r.rate_slow = 0.3; r.slow_ms = 50; }},
      {"opFailure", [](sim::FaultRule& r) { r.rate_op_failure = 0.3; }},
      {"quota", [](sim::FaultRule& r) { r.rate_quota = 0.3; }},
  };
  int plans_with_changes = 0, dry_runs_planned = 0;
  for (size_t i = 0; i < faults.size(); ++i) {
    sim::FaultRule rule;
    faults[i].second(rule);
    ASSERT_TRUE(emu_->SetFaults({i + 11, {rule}}).ok());
    emu_->ResetCounters();
    for (int n = 0; n < 4; ++n) {
      std::vector<std::string> plan = {"plan", "--repo", repo_.string(), "--detailed-exitcode"};
      auto c = Cloud();
      plan.insert(plan.end(), c.begin(), c.end());
      std::string out;
      if (RunBinary(plan, ChildEnvironment(metadata.host()), &out) == 2) ++plans_with_changes;
    }
    EXPECT_EQ(emu_->counters().mutating_calls, 0) << "plan under " << faults[i].first;
    emu_->ResetCounters();
    DaemonProcess d({"--repo", repo_.string(), "--dry-run", "--drift-interval", "1s"},
                    (tmp_.path() / ("dry-" + faults[i].first + ".log")).string(), emu_->endpoint(), metadata.host());
    // Until it has planned (a refresh may fail under the fault, and a failed
    // one backs off), or has at least been at work against the faulty cloud.
    bool planned = false;
    WaitUntil([&] {
      json t = d.Target("proj-rel/gke");
      planned = t.is_object() && t["revision"] == head && t["state"] == "pending";
      return planned || emu_->counters().calls >= 12;
    }, std::chrono::seconds(30));
    if (planned) ++dry_runs_planned;
    EXPECT_EQ(emu_->counters().mutating_calls, 0) << faults[i].first << "\n" << emu_->counters().ToJson().dump();
    EXPECT_GT(emu_->counters().calls, 0) << faults[i].first;
  }
  EXPECT_GT(plans_with_changes, 0);
  EXPECT_GE(dry_runs_planned, 1);
  RecordProperty("plans_with_changes", plans_with_changes);
  RecordProperty("dry_runs_planned", dry_runs_planned);
}

}  // namespace
}  // namespace tpu::reliability
