// A remote that accepts the connection and never answers (issue 24): libgit2
// 1.5 would wait on it forever. `watch --fetch-timeout` abandons the fetch,
// reports it, keeps serving, and still stops at once on SIGTERM.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "source/child_fetch.h"
#include "daemon/daemon_fixture.h"
#include "daemon/daemon_process.h"

namespace tpu::daemon {
namespace {

using namespace testing;

// Listens on loopback, accepts every connection and holds it open, silent.
class SilentServer {
 public:
  SilentServer() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      for (;;) {
        int c = accept(fd_, nullptr, nullptr);
        if (c < 0) return;  // closed
        ++accepted_;
        held_.push_back(c);
      }
    });
  }
  ~SilentServer() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
    for (int c : held_) close(c);
  }
  int port() const { return port_; }
  int accepted() const { return accepted_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<int> accepted_{0};
  std::vector<int> held_;
  std::thread thread_;
};

TEST(FetchTimeoutE2eTest, ARemoteThatNeverAnswersIsAbandonedAndSigtermStillStopsAtOnce) {
  TempDir tmp;
  SilentServer silent;
  CloudFixture cloud;
  test_support::MetadataServer metadata;
  const std::string url = "http://127.0.0.1:" + std::to_string(silent.port()) + "/capacity.git";
  DaemonProcess d({"--repo", url, "--workdir", (tmp.path() / "clone").string(), "--fetch-timeout", "1s",
                   "--poll-interval", "2s"},
                  (tmp.path() / "daemon.log").string(), cloud.emulator().endpoint(), metadata.host());

  // The first fetch is abandoned after a second of silence; the daemon comes up.
  ASSERT_NE(d.Port(), 0) << d.Log();
  EXPECT_GE(silent.accepted(), 1);
  EXPECT_NE(d.Log().find("nothing received for 1000 ms (--fetch-timeout); abandoned"), std::string::npos) << d.Log();
  // The next poll meets the same silence, and is counted as a failed fetch.
  ASSERT_TRUE(WaitUntil([&] {
    auto m = d.Get("/metrics");
    return m && m->body.find("tpu_provisioner_fetches_total{result=\"error\"} 1") != std::string::npos;
  })) << d.Log();
  EXPECT_GE(silent.accepted(), 2);

  // SIGTERM while a fetch hangs: the fetch process is killed, no wait for the timeout.
  ASSERT_TRUE(WaitUntil([&] { return silent.accepted() >= 3; })) << d.Log();
  auto start = std::chrono::steady_clock::now();
  d.Signal(SIGTERM);
  auto status = d.WaitExit();
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << d.Log();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << d.Log();
}

TEST(ChildFetchTest, TheChildsAnswerReadsBackAsTheResult) {
  auto ok = source::ParseChildFetchResult("...." + source::FormatChildFetchResult(std::string(40, 'a')));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, std::string(40, 'a'));
  auto err = source::ParseChildFetchResult(source::FormatChildFetchResult(Status::NotFound("fetch x: branch main\nnot found")));
  EXPECT_EQ(err.status(), Status::NotFound("fetch x: branch main not found"));
  EXPECT_FALSE(source::ParseChildFetchResult("").ok());
  source::RemoteOptions r{"https://host/r.git", "main", "/w", {}};
  r.credentials.token_file = "/etc/token";
  auto args = source::ChildFetchArgs(r);
  std::vector<std::string> want = {"git-fetch", "--url", "https://host/r.git", "--branch", "main", "--workdir", "/w",
                                   "--git-token-file", "/etc/token", "--git-username", "x-access-token"};
  EXPECT_EQ(args, want);
}

}  // namespace
}  // namespace tpu::daemon
