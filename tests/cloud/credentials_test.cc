// Application Default Credentials, each path against a token endpoint served
// by the test: service_account (the JWT's signature checked server-side with
// the public half of a key generated here), authorized_user, the gcloud
// well-known file, the metadata server; the search order; the token cache.
#include "cloud/credentials.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "base/fake_env.h"
#include "cloud/api_caller.h"
#include "cloud/jwt.h"
#include "cloud/test_keys.h"
#include "http/curl_transport.h"
#include "http/test_server.h"

namespace tpu::cloud {
namespace {

using http::testing::TestServer;
namespace fs = std::filesystem;

// A fake OAuth token endpoint and metadata server.
class TokenEndpoint {
 public:
  explicit TokenEndpoint(std::string public_pem) : public_pem_(std::move(public_pem)) {
    srv_.server().Post("/token", [this](const httplib::Request& req, httplib::Response& res) { Token(req, res); });
    srv_.server().Get("/computeMetadata/v1/instance/service-accounts/default/token",
                      [this](const httplib::Request& req, httplib::Response& res) {
                        if (req.get_header_value("Metadata-Flavor") != "Google") {
                          res.status = 403;
                          return;
                        }
                        res.set_content(R"({"access_token":"md-token","expires_in":3599,"token_type":"Bearer"})",
                                        "application/json");
                      });
  }
  std::string token_uri() const { return srv_.url() + "token"; }
  std::string host_port() const { return srv_.host_port(); }
  TestServer& server() { return srv_; }
  nlohmann::json last_claims;
  std::string last_grant;

 private:
  void Token(const httplib::Request& req, httplib::Response& res) {
    last_grant = req.get_param_value("grant_type");
    if (last_grant == "urn:ietf:params:oauth:grant-type:jwt-bearer") {
      auto claims = VerifyJwtRs256(req.get_param_value("assertion"), public_pem_);
      if (!claims.ok()) {
        res.status = 400;
        res.set_content(R"({"error":"invalid_grant","error_description":"Invalid JWT Signature."})",
                        "application/json");
        return;
      }
      last_claims = *claims;
      if (last_claims["aud"] != token_uri()) {
        res.status = 400;
        res.set_content(R"({"error":"invalid_grant","error_description":"bad audience"})", "application/json");
        return;
      }
      res.set_content(R"({"access_token":"sa-token","expires_in":3600,"token_type":"Bearer"})", "application/json");
      return;
    }
    if (last_grant == "refresh_token") {
      if (req.get_param_value("refresh_token") != "rt-1" || req.get_param_value("client_id") != "cid" ||
          req.get_param_value("client_secret") != "csecret") {
        res.status = 400;
        res.set_content(R"({"error":"invalid_grant","error_description":"Token has been expired or revoked."})",
                        "application/json");
        return;
      }
      res.set_content(R"({"access_token":"user-token","expires_in":3600})", "application/json");
      return;
    }
    res.status = 400;
    res.set_content(R"({"error":"unsupported_grant_type"})", "application/json");
  }

  TestServer srv_;
  std::string public_pem_;
};

class CredentialsTest : public ::testing::Test {
 protected:
  CredentialsTest() : keys_(testing::SharedTestKeys()), endpoint_(keys_.public_pem) {
    dir_ = fs::temp_directory_path() / ("tpu-creds-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  ~CredentialsTest() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  std::string AuthorizedUserJson(const std::string& token_uri) {
    return nlohmann::json{{"type", "authorized_user"}, {"client_id", "cid"}, {"client_secret", "csecret"},
                          {"refresh_token", "rt-1"}, {"token_uri", token_uri}}
        .dump();
  }

  testing::TestKeyPair keys_;
  TokenEndpoint endpoint_;
  fs::path dir_;
  FakeEnv env_;
  http::CurlTransport transport_;
};

TEST_F(CredentialsTest, ServiceAccountKeyFromGoogleApplicationCredentials) {
  env_.SetVar("GOOGLE_APPLICATION_CREDENTIALS", Write("sa.json", testing::ServiceAccountJson(keys_, endpoint_.token_uri())));
  env_.SetVar("GCE_METADATA_HOST", endpoint_.host_port());  // must not be used
  auto provider = FindDefaultCredentials(&transport_, env_);
  ASSERT_TRUE(provider.ok()) << provider.status().ToString();
  EXPECT_EQ((*provider)->Describe(), "service_account robot@proj.iam.gserviceaccount.com");
  auto token = (*provider)->Token();
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(*token, "sa-token");
  // The signature verified server-side; now the claims.
  EXPECT_EQ(endpoint_.last_claims["iss"], "robot@proj.iam.gserviceaccount.com");
  EXPECT_EQ(endpoint_.last_claims["sub"], "robot@proj.iam.gserviceaccount.com");
  EXPECT_EQ(endpoint_.last_claims["aud"], endpoint_.token_uri());
  EXPECT_EQ(endpoint_.last_claims["scope"], kCloudPlatformScope);
  EXPECT_EQ(endpoint_.last_claims["exp"].get<int64_t>() - endpoint_.last_claims["iat"].get<int64_t>(), 3600);
}

TEST_F(CredentialsTest, ServiceAccountSignedWithAnotherKeyIsRejectedWithTheEndpointsMessage) {
  auto other = testing::MakeRsaKeyPair(1024);  // any other key will do
  env_.SetVar("GOOGLE_APPLICATION_CREDENTIALS", Write("sa.json", testing::ServiceAccountJson(other, endpoint_.token_uri())));
  auto provider = FindDefaultCredentials(&transport_, env_);
  ASSERT_TRUE(provider.ok());
  auto token = (*provider)->Token();
  ASSERT_FALSE(token.ok());
  EXPECT_NE(token.status().message().find("Invalid JWT Signature."), std::string::npos) << token.status().ToString();
}

TEST_F(CredentialsTest, AuthorizedUserFromGoogleApplicationCredentials) {
  env_.SetVar("GOOGLE_APPLICATION_CREDENTIALS", Write("user.json", AuthorizedUserJson(endpoint_.token_uri())));
  auto provider = FindDefaultCredentials(&transport_, env_);
  ASSERT_TRUE(provider.ok()) << provider.status().ToString();
  auto token = (*provider)->Token();
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(*token, "user-token");
  EXPECT_EQ(endpoint_.last_grant, "refresh_token");
}

TEST_F(CredentialsTest, GcloudWellKnownFileUnderCloudsdkConfig) {
  Write("gcloud-config/application_default_credentials.json", AuthorizedUserJson(endpoint_.token_uri()));
  env_.SetVar("CLOUDSDK_CONFIG", (dir_ / "gcloud-config").string());
  env_.SetVar("HOME", (dir_ / "nohome").string());
  env_.SetVar("GCE_METADATA_HOST", endpoint_.host_port());
  auto provider = FindDefaultCredentials(&transport_, env_);
  ASSERT_TRUE(provider.ok());
  EXPECT_EQ((*provider)->Token().value(), "user-token");
}

TEST_F(CredentialsTest, GcloudWellKnownFileUnderHome) {
  Write("home/.config/gcloud/application_default_credentials.json",
        testing::ServiceAccountJson(keys_, endpoint_.token_uri()));
  env_.SetVar("HOME", (dir_ / "home").string());
  auto provider = FindDefaultCredentials(&transport_, env_);
  ASSERT_TRUE(provider.ok());
  EXPECT_EQ((*provider)->Token().value(), "sa-token");
}

TEST_F(CredentialsTest, ExplicitFileWinsOverWellKnownFile) {
  Write("home/.config/gcloud/application_default_credentials.json", AuthorizedUserJson(endpoint_.token_uri()));
  env_.SetVar("HOME", (dir_ / "home").string());
  env_.SetVar("GOOGLE_APPLICATION_CREDENTIALS", Write("sa.json", testing::ServiceAccountJson(keys_, endpoint_.token_uri())));
  auto provider = FindDefaultCredentials(&transport_, env_);
  ASSERT_TRUE(provider.ok());
  EXPECT_EQ((*provider)->Token().value(), "sa-token");
}

TEST_F(CredentialsTest, AccessTokenFileWinsAndIsReReadOnEveryCall) {
  env_.SetVar("CLOUDSDK_AUTH_ACCESS_TOKEN_FILE", Write("token", "ya29.first\n"));
  env_.SetVar("GOOGLE_APPLICATION_CREDENTIALS", Write("sa.json", testing::ServiceAccountJson(keys_, endpoint_.token_uri())));
  auto provider = FindDefaultCredentials(&transport_, env_);
  ASSERT_TRUE(provider.ok()) << provider.status().ToString();
  EXPECT_EQ((*provider)->Token().value(), "ya29.first");
  Write("token", "ya29.second");  // CI refreshed it
  EXPECT_EQ((*provider)->Token().value(), "ya29.second");
  EXPECT_TRUE(endpoint_.server().requests().empty());  // no exchange of the key file
  env_.SetVar("CLOUDSDK_AUTH_ACCESS_TOKEN_FILE", (dir_ / "missing").string());
  EXPECT_FALSE(FindDefaultCredentials(&transport_, env_).ok());  // named but missing: an error
}

TEST_F(CredentialsTest, MetadataServerWhenNoFile) {
  env_.SetVar("HOME", (dir_ / "empty-home").string());
  env_.SetVar("GCE_METADATA_HOST", endpoint_.host_port());
  auto provider = FindDefaultCredentials(&transport_, env_);
  ASSERT_TRUE(provider.ok());
  EXPECT_EQ((*provider)->Describe(), "metadata server " + endpoint_.host_port());
  EXPECT_EQ((*provider)->Token().value(), "md-token");
  auto seen = endpoint_.server().requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(std::string(httplib::detail::get_header_value(seen[0].headers, "Metadata-Flavor", 0, "")), "Google");
}

TEST_F(CredentialsTest, UnreachableMetadataServerSaysWhatWasTried) {
  int port;
  {
    TestServer closed;
    port = closed.port();
  }
  env_.SetVar("HOME", (dir_ / "empty-home").string());
  env_.SetVar("GCE_METADATA_HOST", "127.0.0.1:" + std::to_string(port));
  auto provider = FindDefaultCredentials(&transport_, env_);
  ASSERT_TRUE(provider.ok());
  auto token = (*provider)->Token();
  ASSERT_FALSE(token.ok());
  EXPECT_EQ(token.status().code(), Status::Code::kPermissionDenied);
  // The three places, in the order searched.
  const std::string& m = token.status().message();
  EXPECT_EQ(m.substr(0, m.find("unreachable (")),
            "no Google Cloud credentials found; looked in: (1) GOOGLE_APPLICATION_CREDENTIALS: unset; "
            "(2) the gcloud application-default credentials file " + (dir_ / "empty-home").string() +
            "/.config/gcloud/application_default_credentials.json: absent (`gcloud auth "
            "application-default login` writes it); (3) the GCE metadata server at 127.0.0.1:" +
            std::to_string(port) + ": ");
}

TEST_F(CredentialsTest, NamedFileThatIsMissingOrMalformedIsAnErrorNotAFallThrough) {
  env_.SetVar("GCE_METADATA_HOST", endpoint_.host_port());
  env_.SetVar("GOOGLE_APPLICATION_CREDENTIALS", (dir_ / "absent.json").string());
  auto missing = FindDefaultCredentials(&transport_, env_);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("GOOGLE_APPLICATION_CREDENTIALS"), std::string::npos);

  env_.SetVar("GOOGLE_APPLICATION_CREDENTIALS", Write("bad.json", R"({"type":"external_account"})"));
  auto bad = FindDefaultCredentials(&transport_, env_);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unsupported credentials type \"external_account\""), std::string::npos);

  env_.SetVar("GOOGLE_APPLICATION_CREDENTIALS", Write("nokey.json", R"({"type":"service_account","client_email":"a@b"})"));
  auto nokey = FindDefaultCredentials(&transport_, env_);
  ASSERT_FALSE(nokey.ok());
  EXPECT_NE(nokey.status().message().find("private_key"), std::string::npos);
  EXPECT_EQ(endpoint_.server().request_count(), 0u);
}

// A fetcher that counts and hands out tokens expiring an hour after the fake clock.
class CountingFetcher : public TokenFetcher {
 public:
  CountingFetcher(const Clock* clock, int* count) : clock_(clock), count_(count) {}
  Result<AccessToken> Fetch() override {
    ++*count_;
    return AccessToken{"t" + std::to_string(*count_), clock_->WallNow() + std::chrono::hours(1)};
  }
  std::string Describe() const override { return "counting"; }

 private:
  const Clock* clock_;
  int* count_;
};

TEST(CachingTokenProviderTest, CachesUntilShortlyBeforeExpiry) {
  FakeEnv clock;
  int count = 0;
  CachingTokenProvider p(std::make_unique<CountingFetcher>(&clock, &count), clock, std::chrono::seconds(300));
  EXPECT_EQ(p.Token().value(), "t1");
  clock.Advance(std::chrono::minutes(54));
  EXPECT_EQ(p.Token().value(), "t1");  // 6 minutes left: still good
  clock.Advance(std::chrono::minutes(2));
  EXPECT_EQ(p.Token().value(), "t2");  // 4 minutes left: inside the margin
  EXPECT_EQ(p.fetches(), 2);
}

TEST_F(CredentialsTest, ConcurrentCallersShareOneExchange) {
  env_.SetVar("GOOGLE_APPLICATION_CREDENTIALS", Write("sa.json", testing::ServiceAccountJson(keys_, endpoint_.token_uri())));
  auto provider = FindDefaultCredentials(&transport_, env_);
  ASSERT_TRUE(provider.ok());
  {
    std::vector<std::jthread> threads;
    for (int i = 0; i < 8; ++i) threads.emplace_back([&] { EXPECT_EQ((*provider)->Token().value(), "sa-token"); });
  }
  EXPECT_EQ(endpoint_.server().request_count(), 1u);
}

TEST_F(CredentialsTest, ApiCallsCarryTheBearerToken) {
  env_.SetVar("GOOGLE_APPLICATION_CREDENTIALS", Write("sa.json", testing::ServiceAccountJson(keys_, endpoint_.token_uri())));
  auto provider = FindDefaultCredentials(&transport_, env_);
  ASSERT_TRUE(provider.ok());
  TestServer api;
  api.server().Get("/v1/projects/p/locations/-/clusters", [](const httplib::Request& req, httplib::Response& res) {
    res.status = req.get_header_value("Authorization") == "Bearer sa-token" ? 200 : 401;
    res.set_content("{}", "application/json");
  });
  // Its own transport, destroyed before `api`: a server stopping under an
  // idle keep-alive connection waits out the keep-alive timeout.
  http::CurlTransport api_transport;
  ApiCaller caller(&api_transport, provider->get(), nullptr);
  auto r = caller.Call("GET", api.url() + "v1/projects/p/locations/-/clusters");
  EXPECT_TRUE(r.ok()) << r.status().ToString();
}

TEST(StaticTokenProviderTest, EmptyTokenMeansNoAuthorizationHeader) {
  TestServer api;
  api.server().Get("/x", [](const httplib::Request& req, httplib::Response& res) {
    res.status = req.has_header("Authorization") ? 400 : 200;
  });
  http::CurlTransport transport;
  StaticTokenProvider none("");
  ApiCaller caller(&transport, &none, nullptr);
  EXPECT_TRUE(caller.Call("GET", api.url() + "x").ok());
  StaticTokenProvider fixed("emu");
  ApiCaller caller2(&transport, &fixed, nullptr);
  EXPECT_FALSE(caller2.Call("GET", api.url() + "x").ok());
}

TEST(JwtTest, SignVerifyRoundTripAndTamperDetection) {
  const auto& keys = testing::SharedTestKeys();
  auto jwt = SignJwtRs256({{"iss", "a"}, {"n", 1}}, keys.private_pem, "kid");
  ASSERT_TRUE(jwt.ok());
  auto claims = VerifyJwtRs256(*jwt, keys.public_pem);
  ASSERT_TRUE(claims.ok());
  EXPECT_EQ((*claims)["iss"], "a");
  std::string tampered = *jwt;
  tampered[tampered.find('.') + 2] ^= 1;
  EXPECT_FALSE(VerifyJwtRs256(tampered, keys.public_pem).ok());
  EXPECT_FALSE(SignJwtRs256({}, "not a key").ok());
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
  EXPECT_EQ(Base64UrlDecode("-_8").value(), "\xfb\xff");
}

}  // namespace
}  // namespace tpu::cloud
