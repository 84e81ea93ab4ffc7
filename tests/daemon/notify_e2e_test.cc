// Notifications end to end: the reconciler with a real Notifier (libcurl)
// posting to a local HTTP receiver, which checks every call's HMAC signature
// and the sequence of events through an apply, a drift put back and a
// stockout. Then a receiver that never answers: reconciles take as long as
// with no notifier at all.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "base/fake_env.h"
#include "daemon/daemon_fixture.h"
#include "daemon/notifier.h"
#include "daemon/reconciler.h"
#include "http/curl_transport.h"
#include "source/git_sources.h"
#include "source/webhook_signature.h"

namespace tpu::daemon {
namespace {

using namespace testing;
using namespace std::chrono_literals;
using nlohmann::json;

constexpr const char* kSecret = "notify-secret-for-tests";

// Records each verified event; a badly signed call is answered 401 and counted.
class Receiver {
 public:
  Receiver() {
    server_.Post("/hook", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      Status s = source::VerifyGitHubSignature(kSecret, req.body, req.get_header_value(kNotifySignatureHeader));
      if (!s.ok()) {
        ++bad_;
        res.status = 401;
        return;
      }
      events_.push_back(json::parse(req.body));
      cv_.notify_all();
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~Receiver() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  // The types of the first `n` events, once they have arrived.
  std::vector<std::string> WaitTypes(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, 20s, [&] { return events_.size() >= n; });
    std::vector<std::string> out;
    for (const auto& e : events_) out.push_back(e["type"].get<std::string>() + " " + e["target"].get<std::string>());
    return out;
  }
  json Event(size_t i) {
    std::lock_guard<std::mutex> lock(mu_);
    return events_.at(i);
  }
  int bad() {
    std::lock_guard<std::mutex> lock(mu_);
    return bad_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<json> events_;
  int bad_ = 0;
};

sim::CloudEmulatorOptions EightV5eChips() {
  sim::CloudEmulatorOptions o = FastEmulatorOptions();
  o.capacity = json{{"zones", json::array({json{{"zone", kZone}, {"accelerator", "tpu-v5-lite-podslice"}, {"chips", 8}}})}};
  return o;
}

class NotifyE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    InitRepo(dir());
    WriteFile(dir() / "deploy/tpu-proj/c1/cluster.yaml", ClusterYaml("c1"));
    auto repo = source::GitRepo::Open(dir().string());
    ASSERT_TRUE(repo.ok());
    source_ = std::make_unique<source::CheckoutSource>(repo.value());
    port_ = std::make_unique<ConnectionCloud>(&cloud_.connection(), FastExecuteOptions());
  }
  const std::filesystem::path& dir() const { return tmp_.path(); }

  TempDir tmp_;
  CloudFixture cloud_{EightV5eChips()};
  std::unique_ptr<source::CheckoutSource> source_;
  std::unique_ptr<ConnectionCloud> port_;
  http::CurlTransport transport_;
};

TEST_F(NotifyE2ETest, SignedEventsOfAnApplyADriftAndAStockout) {
  Receiver receiver;
  NotifierOptions no;
  no.urls = {receiver.url()};
  no.secret = kSecret;
  Notifier notifier(&transport_, no);
  FakeEnv clock;
  ReconcilerOptions o;
  o.drift_interval = 1min;
  o.backoff.initial = 10s;
  o.events = &notifier;
  Reconciler r(source_.get(), port_.get(), &clock, o);

  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 1));
  const std::string first = CommitAll(dir(), "one slice");
  ASSERT_EQ(r.RunOnce().applied, 1);
  EXPECT_EQ(receiver.WaitTypes(2), (std::vector<std::string>{"apply.started tpu-proj/c1", "apply.finished tpu-proj/c1"}));
  json started = receiver.Event(0);
  EXPECT_EQ(started["revision"], first);
  EXPECT_EQ(started["text"], "tpu-provisioner: applying 1 actions to tpu-proj/c1 at " + first.substr(0, 12));
  EXPECT_FALSE(started["id"].get<std::string>().empty());

  // Behind git's back: the slice deleted; the drift check puts it back.
  ASSERT_TRUE(cloud_.connection().gke().DeleteNodePool({{kProject, kZone, "c1"}, "train-0"}).ok());
  while (cloud_.Pools("c1").count("train-0")) std::this_thread::sleep_for(5ms);
  clock.Advance(61s);
  ASSERT_EQ(r.RunOnce().applied, 1);
  auto types = receiver.WaitTypes(5);
  ASSERT_EQ(types.size(), 5u);
  EXPECT_EQ(types[2], "drift.detected tpu-proj/c1");
  EXPECT_EQ(receiver.Event(2)["details"]["resources"], json::array({"create nodePool train-0"}));
  EXPECT_EQ(types[4], "apply.finished tpu-proj/c1");

  // Three slices of 4 chips where the zone has 8: the third is a stockout.
  WriteFile(dir() / "deploy/tpu-proj/c1/pools.yaml", PoolYaml("train", 3));
  CommitAll(dir(), "three slices");
  CycleReport report = r.RunOnce();
  EXPECT_EQ(report.waiting_for_capacity, 1);
  types = receiver.WaitTypes(7);
  ASSERT_EQ(types.size(), 7u);
  EXPECT_EQ(types[5], "apply.started tpu-proj/c1");
  EXPECT_EQ(types[6], "stockout tpu-proj/c1");
  EXPECT_EQ(receiver.Event(6)["details"]["waitingForCapacity"], 1);
  EXPECT_EQ(receiver.bad(), 0);
  EXPECT_EQ(notifier.stats().sent, 7u);
}

// A socket that accepts connections and never answers: the worst receiver.
class BlackHole {
 public:
  BlackHole() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(fd_, 64);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~BlackHole() { close(fd_); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Four reconciles (apply, drift check, grow, shrink), timed on the real clock.
std::vector<double> Reconciles(source::RevisionSource* source, CloudPort* cloud, CloudFixture& fixture,
                               const std::filesystem::path& dir, EventSink* events, const std::string& name) {
  Clock& clock = Env::Default();
  ReconcilerOptions o;
  o.drift_interval = 0s;  // every pass a drift check
  o.allow_mass_delete = true;
  o.events = events;
  Reconciler r(source, cloud, &clock, o);
  std::vector<double> seconds;
  for (int slices : {1, 1, 2, 1}) {
    WriteFile(dir / "deploy/tpu-proj/c1/pools.yaml", PoolYaml(name, slices));
    CommitAll(dir, name + " " + std::to_string(slices));
    CycleReport c = r.RunOnce();
    EXPECT_TRUE(c.error.ok()) << c.error.ToString();
    seconds.push_back(std::chrono::duration<double>(c.duration).count());
  }
  WriteFile(dir / "deploy/tpu-proj/c1/pools.yaml", "");
  CommitAll(dir, "empty");
  r.RunOnce();
  (void)fixture;
  return seconds;
}

TEST_F(NotifyE2ETest, AReceiverThatNeverAnswersDoesNotSlowReconciles) {
  double without = 0, with = 0;
  for (double s : Reconciles(source_.get(), port_.get(), cloud_, dir(), nullptr, "a")) without += s;
  BlackHole hole;
  NotifierOptions no;
  no.urls = {hole.url()};
  no.timeout = 1s;  // each call hangs this long
  {
    Notifier notifier(&transport_, no);
    for (double s : Reconciles(source_.get(), port_.get(), cloud_, dir(), &notifier, "b")) with += s;
    EXPECT_EQ(notifier.stats().sent, 0u);
  }  // (the destructor waits for the call in flight: at most its timeout)
  std::printf("reconcile seconds over 4 passes: %.3f without a notifier, %.3f with a receiver that never answers\n",
              without, with);
  // A bound with a margin: a notifier that blocked would add 1 s per event (two or more events a pass).
  EXPECT_LT(with, without + 2.0) << "without a notifier " << without << " s, with a dead receiver " << with << " s";
}

}  // namespace
}  // namespace tpu::daemon
