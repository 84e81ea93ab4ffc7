// RemoteRepo over smart HTTP with a token: a real `git http-backend` behind
// Basic auth (git_http_server.py), so the credential callback is exercised
// the way GitHub or GitLab would exercise it.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "source/git_fixture.h"
#include "source/remote.h"

namespace tpu::source {
namespace {

using ::testing::Not;
using ::testing::HasSubstr;
using namespace tpu::source::testing;

constexpr char kToken[] = "ghs_TestToken123";

// Runs the server for the test's lifetime; `port` once it listens.
class HttpServer {
 public:
  HttpServer(const fs::path& root, const std::string& token) {
    int out[2];
    if (pipe(out) != 0) std::abort();
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      close(out[0]);
      std::string script = std::string(TPU_SOURCE_DIR) + "/tests/source/git_http_server.py";
      execlp("python3", "python3", script.c_str(), root.c_str(), token.c_str(), nullptr);
      _exit(127);
    }
    close(out[1]);
    // Blocks until the server has bound its port and printed it.
    FILE* f = fdopen(out[0], "r");
    if (fscanf(f, "%d", &port_) != 1) port_ = 0;
    fclose(f);
  }
  ~HttpServer() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  int port() const { return port_; }

 private:
  pid_t pid_;
  int port_ = 0;
};

// One server and upstream for the suite (python and git start slowly on a
// busy machine); each test clones into its own work directory.
class RemoteHttpTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new TempDir;
    fs::path upstream = root_->path() / "srv/upstream.git";
    fs::create_directories(upstream.parent_path());
    Sh("git init -q --bare -b main " + Quote(upstream.string()));
    fs::path dev = root_->path() / "dev";
    InitRepo(dev);
    WriteFile(dev / "deploy/p/c/pools.yaml", "a: 1\n");
    head_ = new std::string(CommitAll(dev, "first"));
    Git(dev, "push -q " + Quote(upstream.string()) + " main");
    server_ = new HttpServer(root_->path() / "srv", kToken);
  }
  static void TearDownTestSuite() {
    delete server_;
    delete head_;
    delete root_;
  }
  void SetUp() override {
    if (access("/usr/lib/git-core/git-http-backend", X_OK) != 0) GTEST_SKIP() << "git-http-backend not installed";
    ASSERT_NE(server_->port(), 0) << "git_http_server.py did not start (is python3 installed?)";
    url_ = "http://127.0.0.1:" + std::to_string(server_->port()) + "/upstream.git";
  }
  Result<std::string> FetchWith(const GitCredentials& creds) {
    Result<RemoteRepo> r = RemoteRepo::Open({url_, "main", (work_.path() / "clone").string(), creds});
    if (!r.ok()) return r.status();
    return r->Fetch();
  }
  std::string TokenFile(const std::string& content) {
    fs::path p = work_.path() / "token";
    WriteFile(p, content);
    return p.string();
  }
  static TempDir* root_;
  static HttpServer* server_;
  static std::string* head_;
  TempDir work_;
  std::string url_;
};
TempDir* RemoteHttpTest::root_ = nullptr;
HttpServer* RemoteHttpTest::server_ = nullptr;
std::string* RemoteHttpTest::head_ = nullptr;

TEST_F(RemoteHttpTest, SendsTheTokenFromAFile) {
  GitCredentials c;
  c.token_file = TokenFile(std::string(kToken) + "\n");  // as `kubectl create secret --from-file` leaves it
  Result<std::string> r = FetchWith(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, *head_);
}

TEST_F(RemoteHttpTest, SendsTheTokenFromTheEnvironment) {
  setenv("TPU_TEST_GIT_TOKEN", kToken, 1);
  GitCredentials c;
  c.token_env = "TPU_TEST_GIT_TOKEN";
  Result<std::string> r = FetchWith(c);
  unsetenv("TPU_TEST_GIT_TOKEN");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, *head_);
}

TEST_F(RemoteHttpTest, ARefusedTokenIsPermissionDeniedAndNotRetried) {
  GitCredentials c;
  c.token_file = TokenFile("wrong-token-value");
  Result<std::string> r = FetchWith(c);
  EXPECT_EQ(r.status(), Status::PermissionDenied("fetch " + url_ + ": the token from " + c.token_file + " was refused"));
  EXPECT_THAT(r.status().message(), Not(HasSubstr("wrong-token-value")));
}

TEST_F(RemoteHttpTest, NoCredentialsConfigured) {
  EXPECT_EQ(FetchWith({}).status(),
            Status::PermissionDenied("fetch " + url_ + ": the remote asks for a token but none is configured"));
}

TEST_F(RemoteHttpTest, EmptyTokenFile) {
  GitCredentials c;
  c.token_file = TokenFile("\n");
  EXPECT_EQ(FetchWith(c).status(),
            Status::FailedPrecondition("fetch " + url_ + ": token file " + c.token_file + " is empty"));
}

}  // namespace
}  // namespace tpu::source
