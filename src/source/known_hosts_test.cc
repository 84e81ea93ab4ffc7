// known_hosts parsing and matching, and the fetch callbacks that use it,
// with real keys from ssh-keygen (no ssh server is needed: the callbacks are
// called the way libgit2 calls them).
#include "source/known_hosts.h"

#include <git2/sys/credential.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "source/git_fixture.h"
#include "source/git_util.h"
#include "source/remote_callbacks.h"

namespace tpu::source {
namespace {

using ::testing::HasSubstr;
using namespace tpu::source::testing;

// A host key made by ssh-keygen: its known_hosts text and its raw blob.
struct HostKey {
  std::string line;  // "ssh-ed25519 AAAA..."
  std::string blob;
  KnownHosts::Sha256 sha{};
  std::string fingerprint;  // as `ssh-keygen -l -E sha256` prints it
};

HostKey MakeKey(const TempDir& dir, const std::string& name) {
  fs::path key = dir.path() / name;
  Sh("ssh-keygen -q -t ed25519 -N '' -C test -f " + Quote(key.string()));
  HostKey k;
  std::istringstream pub(Sh("cat " + Quote(key.string() + ".pub")));
  std::string type, b64;
  pub >> type >> b64;
  k.line = type + " " + b64;
  k.blob.resize(b64.size());
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(k.blob.data()),
                          reinterpret_cast<const unsigned char*>(b64.data()), static_cast<int>(b64.size()));
  k.blob.resize(static_cast<size_t>(n) - (b64.ends_with("==") ? 2 : b64.ends_with("=") ? 1 : 0));
  SHA256(reinterpret_cast<const unsigned char*>(k.blob.data()), k.blob.size(), k.sha.data());
  std::istringstream fp(Sh("ssh-keygen -l -E sha256 -f " + Quote(key.string() + ".pub")));
  std::string bits;
  fp >> bits >> k.fingerprint;
  return k;
}

class KnownHostsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    a_ = new HostKey(MakeKey(*dir_, "a"));
    b_ = new HostKey(MakeKey(*dir_, "b"));
  }
  static void TearDownTestSuite() {
    delete a_;
    delete b_;
    delete dir_;
  }
  static TempDir* dir_;
  static HostKey *a_, *b_;
};
TempDir* KnownHostsTest::dir_ = nullptr;
HostKey* KnownHostsTest::a_ = nullptr;
HostKey* KnownHostsTest::b_ = nullptr;

TEST_F(KnownHostsTest, PlainHostNames) {
  KnownHosts kh = KnownHosts::Parse("# comment\n\ngithub.com,140.82.121.4 " + a_->line + " comment\n", "kh");
  EXPECT_EQ(kh.size(), 1u);
  EXPECT_EQ(kh.Check("github.com", 22, a_->sha), Status::OK());
  EXPECT_EQ(kh.Check("GitHub.COM", 22, a_->sha), Status::OK());
  EXPECT_EQ(kh.Check("140.82.121.4", 22, a_->sha), Status::OK());
  EXPECT_EQ(kh.Check("gitlab.com", 22, a_->sha),
            Status::PermissionDenied("ssh host gitlab.com is not in known_hosts file kh"));
  EXPECT_EQ(kh.Check("github.com", 22, b_->sha),
            Status::PermissionDenied("ssh host key of github.com (" + b_->fingerprint +
                                     ") does not match known_hosts file kh: refusing to connect "
                                     "(the key changed, or someone is in the middle)"));
}

TEST_F(KnownHostsTest, NonStandardPort) {
  KnownHosts kh = KnownHosts::Parse("[git.example.com]:2222 " + a_->line + "\n", "kh");
  EXPECT_EQ(kh.Check("git.example.com", 2222, a_->sha), Status::OK());
  EXPECT_EQ(kh.Check("git.example.com", 22, a_->sha).code(), Status::Code::kPermissionDenied);
}

TEST_F(KnownHostsTest, HashedNamesAsSshKeygenWritesThem) {
  fs::path file = dir_->path() / "hashed_known_hosts";
  WriteFile(file, "git.example.com " + a_->line + "\n[git.example.com]:2222 " + b_->line + "\n");
  Sh("ssh-keygen -q -H -f " + Quote(file.string()));
  Result<KnownHosts> kh = KnownHosts::Load(file.string());
  ASSERT_TRUE(kh.ok()) << kh.status().ToString();
  ASSERT_THAT(Sh("cat " + Quote(file.string())), HasSubstr("|1|"));
  EXPECT_EQ(kh->Check("git.example.com", 22, a_->sha), Status::OK());
  EXPECT_EQ(kh->Check("git.example.com", 2222, b_->sha), Status::OK());
  EXPECT_EQ(kh->Check("other.example.com", 22, a_->sha).code(), Status::Code::kPermissionDenied);
}

TEST_F(KnownHostsTest, WildcardsAndNegation) {
  KnownHosts kh = KnownHosts::Parse("*.corp.example,!bad.corp.example " + a_->line + "\n", "kh");
  EXPECT_EQ(kh.Check("git.corp.example", 22, a_->sha), Status::OK());
  EXPECT_EQ(kh.Check("x.y.corp.example", 22, a_->sha), Status::OK());
  EXPECT_EQ(kh.Check("corp.example", 22, a_->sha).code(), Status::Code::kPermissionDenied);
  EXPECT_EQ(KnownHosts::Parse("git?.example " + a_->line, "kh").Check("git1.example", 22, a_->sha), Status::OK());
  EXPECT_EQ(kh.Check("bad.corp.example", 22, a_->sha),
            Status::PermissionDenied("ssh host bad.corp.example is not in known_hosts file kh"));
}

TEST_F(KnownHostsTest, RevokedKeysAndSkippedLines) {
  KnownHosts kh = KnownHosts::Parse("@revoked * " + b_->line + "\n@cert-authority *.example " + a_->line +
                                        "\nnot-enough-fields\nh ssh-ed25519 !!notbase64!!\nh " + b_->line + "\n",
                                    "kh");
  EXPECT_EQ(kh.size(), 2u);
  EXPECT_EQ(kh.Check("h", 22, b_->sha), Status::PermissionDenied("ssh host key of h is marked @revoked in kh"));
}

TEST_F(KnownHostsTest, MissingFile) {
  EXPECT_EQ(KnownHosts::Load("/nonexistent/known_hosts").status(),
            Status::IoError("read known_hosts file /nonexistent/known_hosts: No such file or directory"));
}

// The callbacks libgit2 calls during a fetch.
class RemoteCallbacksTest : public KnownHostsTest {
 protected:
  void SetUp() override {
    EnsureLibgit2();
    state_.credentials = &creds_;
    state_.url = "ssh://git@git.example.com:2222/org/repo.git";
  }
  int CheckKey(const HostKey& k, const char* host = "git.example.com") {
    git_cert_hostkey cert{};
    cert.parent.cert_type = GIT_CERT_HOSTKEY_LIBSSH2;
    cert.type = GIT_CERT_SSH_RAW;
    cert.raw_type = GIT_CERT_SSH_RAW_TYPE_KEY_ED25519;
    cert.hostkey = k.blob.data();
    cert.hostkey_len = k.blob.size();
    return CheckCertificate(&cert.parent, /*valid=*/0, host, &state_);
  }
  GitCredentials creds_;
  RemoteCallbackState state_;
  TempDir tmp_;
};

TEST_F(RemoteCallbacksTest, SshHostKeyIsCheckedAgainstKnownHosts) {
  creds_.ssh_known_hosts_file = (tmp_.path() / "known_hosts").string();
  WriteFile(creds_.ssh_known_hosts_file, "[git.example.com]:2222 " + a_->line + "\n");
  EXPECT_EQ(CheckKey(*a_), 0);
  EXPECT_TRUE(state_.failure.ok());
  EXPECT_EQ(CheckKey(*b_), GIT_ECERTIFICATE);
  EXPECT_EQ(state_.failure.code(), Status::Code::kPermissionDenied);
  EXPECT_THAT(state_.failure.message(), HasSubstr("does not match known_hosts file"));
}

TEST_F(RemoteCallbacksTest, SshWithoutKnownHostsIsRefused) {
  EXPECT_EQ(CheckKey(*a_), GIT_ECERTIFICATE);
  EXPECT_EQ(state_.failure, Status::PermissionDenied("ssh host key of git.example.com cannot be checked: "
                                                     "no known_hosts file configured"));
}

TEST_F(RemoteCallbacksTest, TlsFollowsLibgit2sVerdict) {
  git_cert cert{GIT_CERT_X509};
  EXPECT_EQ(CheckCertificate(&cert, 1, "github.com", &state_), 0);
  EXPECT_EQ(CheckCertificate(&cert, 0, "github.com", &state_), GIT_ECERTIFICATE);
  EXPECT_EQ(state_.failure, Status::PermissionDenied("TLS certificate of github.com is not valid"));
}

TEST_F(RemoteCallbacksTest, SshKeyIsOfferedOnce) {
  creds_.ssh_key_file = (dir_->path() / "a").string();
  git_credential* cred = nullptr;
  ASSERT_EQ(AcquireCredential(&cred, state_.url.c_str(), nullptr, GIT_CREDENTIAL_USERNAME, &state_), 0);
  EXPECT_EQ(cred->credtype, GIT_CREDENTIAL_USERNAME);
  git_credential_free(cred);
  ASSERT_EQ(AcquireCredential(&cred, state_.url.c_str(), "git", GIT_CREDENTIAL_SSH_KEY, &state_), 0);
  EXPECT_EQ(cred->credtype, GIT_CREDENTIAL_SSH_KEY);
  git_credential_free(cred);
  EXPECT_EQ(AcquireCredential(&cred, state_.url.c_str(), "git", GIT_CREDENTIAL_SSH_KEY, &state_), GIT_EAUTH);
  EXPECT_EQ(state_.failure, Status::PermissionDenied("ssh key " + creds_.ssh_key_file + " was refused"));
}

TEST_F(RemoteCallbacksTest, TokenIsSentAsThePassword) {
  creds_.token_file = (tmp_.path() / "token").string();
  WriteFile(creds_.token_file, "  tok-123\n");
  git_credential* cred = nullptr;
  ASSERT_EQ(AcquireCredential(&cred, "https://h/r.git", nullptr, GIT_CREDENTIAL_USERPASS_PLAINTEXT, &state_), 0);
  ASSERT_EQ(cred->credtype, GIT_CREDENTIAL_USERPASS_PLAINTEXT);
  auto* up = reinterpret_cast<git_credential_userpass_plaintext*>(cred);
  EXPECT_STREQ(up->username, "x-access-token");
  EXPECT_STREQ(up->password, "tok-123");
  git_credential_free(cred);
  // A user name in the URL wins; a second request means the first was refused.
  state_.token_attempts = 0;
  ASSERT_EQ(AcquireCredential(&cred, "https://h/r.git", "oauth2", GIT_CREDENTIAL_USERPASS_PLAINTEXT, &state_), 0);
  EXPECT_STREQ(reinterpret_cast<git_credential_userpass_plaintext*>(cred)->username, "oauth2");
  git_credential_free(cred);
  EXPECT_EQ(AcquireCredential(&cred, "https://h/r.git", "oauth2", GIT_CREDENTIAL_USERPASS_PLAINTEXT, &state_),
            GIT_EAUTH);
}

TEST(SshPortTest, FromUrls) {
  EXPECT_EQ(SshPort("ssh://git@host:2222/x.git"), 2222);
  EXPECT_EQ(SshPort("ssh://host/x.git"), 22);
  EXPECT_EQ(SshPort("ssh://[::1]/x.git"), 22);
  EXPECT_EQ(SshPort("ssh://git@[::1]:2200/x.git"), 2200);
  EXPECT_EQ(SshPort("git@github.com:org/repo.git"), 22);
}

TEST(RedactUrlTest, DropsUserInfo) {
  EXPECT_EQ(RedactUrl("https://user:tok@github.com/o/r.git"), "https://github.com/o/r.git");
  EXPECT_EQ(RedactUrl("https://github.com/o/r.git"), "https://github.com/o/r.git");
  EXPECT_EQ(RedactUrl("git@github.com:o/r.git"), "git@github.com:o/r.git");
  EXPECT_EQ(RedactUrl("https://github.com/o/r@v1.git"), "https://github.com/o/r@v1.git");
}

}  // namespace
}  // namespace tpu::source
