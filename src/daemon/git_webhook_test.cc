#include "daemon/git_webhook.h"

#include <openssl/hmac.h>

#include <strings.h>

#include <map>

#include <gtest/gtest.h>

namespace tpu::daemon {
namespace {

std::string Sign(const std::string& secret, const std::string& body) {
  unsigned char mac[32];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(body.data()), body.size(), mac, &len);
  std::string hex = "sha256=";
  for (unsigned i = 0; i < len; ++i) {
    static const char k[] = "0123456789abcdef";
    hex += k[mac[i] >> 4];
    hex += k[mac[i] & 15];
  }
  return hex;
}

std::string Hex(const std::string& sha256_header) { return sha256_header.substr(7); }

// Headers as a forge sends them (names matched without regard to case).
HeaderLookup Headers(std::map<std::string, std::string> h) {
  return [h](const std::string& name) {
    for (const auto& [k, v] : h)
      if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
    return std::string();
  };
}

TEST(GitWebhookTest, OnlySignedFreshDeliveriesTriggerAFetch) {
  int fetches = 0;
  GitWebhook hook([&] { ++fetches; });
  hook.SetSecret("s3cret");
  const std::string body = "{}";
  EXPECT_EQ(hook.Handle(body, Headers({})).http_status, 401);
  EXPECT_EQ(hook.Handle(body, Headers({{"X-Hub-Signature-256", "sha256=00"}, {"X-GitHub-Delivery", "d-0"}})).http_status,
            401);
  EXPECT_EQ(hook.Handle(body, Headers({{"X-Hub-Signature-256", Sign("other", body)}, {"X-GitHub-Delivery", "d-0"}}))
                .http_status,
            401);
  EXPECT_EQ(fetches, 0);

  auto github = Headers({{"X-Hub-Signature-256", Sign("s3cret", body)}, {"X-GitHub-Delivery", "d-1"}});
  WebhookReply ok = hook.Handle(body, github);
  EXPECT_EQ(ok.http_status, 202);
  EXPECT_EQ(fetches, 1);
  EXPECT_EQ(hook.Handle(body, github).http_status, 401);  // replay
  auto counts = hook.Counts();
  EXPECT_EQ(counts["unauthorized"], 3u);
  EXPECT_EQ(counts["replayed"], 1u);
  EXPECT_EQ(counts["accepted"], 1u);
  // The secret never appears in a reply.
  for (const auto& r : {hook.Handle(body, Headers({})), ok}) EXPECT_EQ(r.body.find("s3cret"), std::string::npos);
}

TEST(GitWebhookTest, ASignedCallWithoutADeliveryIdIsRefused) {
  int fetches = 0;
  GitWebhook hook([&] { ++fetches; });
  hook.SetSecret("s3cret");
  const std::string body = R"({"ref":"refs/heads/main"})";
  for (const auto& headers : {Headers({{"X-Hub-Signature-256", Sign("s3cret", body)}}),
                              Headers({{"X-Gitea-Signature", Hex(Sign("s3cret", body))}}),
                              Headers({{"X-Forgejo-Signature", Hex(Sign("s3cret", body))}}),
                              Headers({{"X-Gitlab-Token", "s3cret"}})}) {
    WebhookReply r = hook.Handle(body, headers);
    EXPECT_EQ(r.http_status, 401);
    EXPECT_EQ(r.result, "no-delivery-id");
    EXPECT_NE(r.body.find("no delivery id"), std::string::npos) << r.body;
  }
  // Another forge's delivery header does not count for GitHub.
  EXPECT_EQ(hook.Handle(body, Headers({{"X-Hub-Signature-256", Sign("s3cret", body)}, {"X-Gitea-Delivery", "x"}}))
                .result,
            "no-delivery-id");
  EXPECT_EQ(fetches, 0);
  EXPECT_EQ(hook.Counts()["no-delivery-id"], 5u);
}

TEST(GitWebhookTest, GiteaForgejoAndGitLabCallsAreAcceptedOnceEach) {
  int fetches = 0;
  GitWebhook hook([&] { ++fetches; });
  hook.SetSecret("s3cret");
  const std::string body = R"({"ref":"refs/heads/main"})";
  auto gitea = Headers({{"X-Gitea-Signature", Hex(Sign("s3cret", body))},
                        {"X-Gitea-Delivery", "f6266f16-1bf3-46a5-9ea4-602e06ead473"}});
  auto forgejo = Headers({{"x-forgejo-signature", Hex(Sign("s3cret", body))},
                          {"x-forgejo-delivery", "0b1c1d55-2a6c-4a43-b6b5-6a0e3fd6f6a1"}});
  auto gitlab = Headers({{"X-Gitlab-Token", "s3cret"}, {"X-Gitlab-Event-UUID", "13792a34-cac6-4fda-95a8-c58e00a3954e"}});
  for (const auto& h : {gitea, forgejo, gitlab}) {
    EXPECT_EQ(hook.Handle(body, h).http_status, 202);
    EXPECT_EQ(hook.Handle(body, h).result, "replayed");
  }
  EXPECT_EQ(fetches, 3);
  // Wrong secrets, and a Gitea signature of another body.
  EXPECT_EQ(hook.Handle(body, Headers({{"X-Gitlab-Token", "s3cret2"}, {"X-Gitlab-Event-UUID", "u-2"}})).result,
            "unauthorized");
  EXPECT_EQ(hook.Handle(body, Headers({{"X-Gitea-Signature", Hex(Sign("s3cret", "{}"))}, {"X-Gitea-Delivery", "g-2"}}))
                .result,
            "unauthorized");
  EXPECT_EQ(hook.Handle(body, Headers({{"X-Forgejo-Signature", "sha256=" + Hex(Sign("s3cret", body))},
                                       {"X-Forgejo-Delivery", "f-2"}}))
                .result,
            "unauthorized");  // bare hex, not GitHub's form
  EXPECT_EQ(fetches, 3);
}

TEST(GitWebhookTest, WithoutASecretTheHookIsOff) {
  int fetches = 0;
  GitWebhook hook([&] { ++fetches; });
  EXPECT_EQ(hook.Handle("{}", Headers({{"X-Hub-Signature-256", Sign("", "{}")}, {"X-GitHub-Delivery", "d"}})).http_status,
            404);
  EXPECT_EQ(fetches, 0);
}

}  // namespace
}  // namespace tpu::daemon
