#include "daemon/git_webhook.h"

#include <openssl/hmac.h>

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

TEST(GitWebhookTest, OnlySignedFreshDeliveriesTriggerAFetch) {
  int fetches = 0;
  GitWebhook hook([&] { ++fetches; });
  hook.SetSecret("s3cret");
  const std::string body = "{}";
  EXPECT_EQ(hook.Handle(body, "", "").http_status, 401);
  EXPECT_EQ(hook.Handle(body, "sha256=00", "").http_status, 401);
  EXPECT_EQ(hook.Handle(body, Sign("other", body), "").http_status, 401);
  EXPECT_EQ(fetches, 0);

  WebhookReply ok = hook.Handle(body, Sign("s3cret", body), "d-1");
  EXPECT_EQ(ok.http_status, 202);
  EXPECT_EQ(fetches, 1);
  EXPECT_EQ(hook.Handle(body, Sign("s3cret", body), "d-1").http_status, 401);  // replay
  EXPECT_EQ(hook.Handle(body, Sign("s3cret", body), "").http_status, 202);    // no delivery id
  EXPECT_EQ(fetches, 2);
  auto counts = hook.Counts();
  EXPECT_EQ(counts["unauthorized"], 3u);
  EXPECT_EQ(counts["replayed"], 1u);
  EXPECT_EQ(counts["accepted"], 2u);
  // The secret never appears in a reply.
  for (const auto& r : {hook.Handle(body, "", ""), ok}) EXPECT_EQ(r.body.find("s3cret"), std::string::npos);
}

TEST(GitWebhookTest, WithoutASecretTheHookIsOff) {
  int fetches = 0;
  GitWebhook hook([&] { ++fetches; });
  EXPECT_EQ(hook.Handle("{}", Sign("", "{}"), "").http_status, 404);
  EXPECT_EQ(fetches, 0);
}

}  // namespace
}  // namespace tpu::daemon
