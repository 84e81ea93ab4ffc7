// Webhook signatures (GitHub's published example) and delivery replay cache.
#include "source/webhook_signature.h"

#include <gtest/gtest.h>

#include "source/delivery_cache.h"

namespace tpu::source {
namespace {

// From GitHub's "Validating webhook deliveries".
constexpr char kSecret[] = "It's a Secret to Everybody";
constexpr char kBody[] = "Hello, World!";
constexpr char kGood[] = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

TEST(WebhookSignatureTest, AcceptsAValidSignature) {
  EXPECT_EQ(VerifyGitHubSignature(kSecret, kBody, kGood), Status::OK());
  // Hex case does not matter.
  EXPECT_EQ(VerifyGitHubSignature(kSecret, kBody,
                                  "sha256=757107EA0EB2509FC211221CCE984B8A37570B6D7586C22C46F4379C8B043E17"),
            Status::OK());
}

TEST(WebhookSignatureTest, RefusesWrongSignatures) {
  Status mismatch = Status::PermissionDenied("webhook signature does not match the body");
  EXPECT_EQ(VerifyGitHubSignature(kSecret, "Hello, World?", kGood), mismatch);
  EXPECT_EQ(VerifyGitHubSignature("another secret", kBody, kGood), mismatch);
  std::string flipped = kGood;
  flipped.back() = '6';
  EXPECT_EQ(VerifyGitHubSignature(kSecret, kBody, flipped), mismatch);
}

TEST(WebhookSignatureTest, RefusesMissingOrMalformedHeaders) {
  EXPECT_EQ(VerifyGitHubSignature(kSecret, kBody, ""),
            Status::PermissionDenied("missing X-Hub-Signature-256 header"));
  Status malformed =
      Status::PermissionDenied("malformed X-Hub-Signature-256 header: expected sha256=<64 hex digits>");
  std::string hex = std::string(kGood).substr(7);
  EXPECT_EQ(VerifyGitHubSignature(kSecret, kBody, hex), malformed);                 // no prefix
  EXPECT_EQ(VerifyGitHubSignature(kSecret, kBody, "sha1=" + hex), malformed);       // other algorithm
  EXPECT_EQ(VerifyGitHubSignature(kSecret, kBody, "sha256=" + hex.substr(2)), malformed);  // short
  EXPECT_EQ(VerifyGitHubSignature(kSecret, kBody, "sha256=" + hex + "00"), malformed);     // long
  EXPECT_EQ(VerifyGitHubSignature(kSecret, kBody, "sha256=zz" + hex.substr(2)), malformed);
}

TEST(WebhookSignatureTest, EmptySecretRefusesEverything) {
  EXPECT_EQ(VerifyGitHubSignature("", kBody, kGood), Status::FailedPrecondition("webhook secret is not configured"));
}

TEST(WebhookSignatureTest, MessagesNeverContainTheSecret) {
  for (const char* header : {"", "garbage", kGood}) {
    Status s = VerifyGitHubSignature(kSecret, "other body", header);
    EXPECT_EQ(s.message().find(kSecret), std::string::npos) << s.message();
  }
}

TEST(DeliveryCacheTest, RefusesAReplayedDelivery) {
  DeliveryCache cache;
  EXPECT_EQ(cache.Admit("72d3162e-cc78-11e3-81ab-4c9367dc0958"), Status::OK());
  EXPECT_EQ(cache.Admit("72d3162e-cc78-11e3-81ab-4c9367dc0958"),
            Status::AlreadyExists("webhook delivery 72d3162e-cc78-11e3-81ab-4c9367dc0958 was already received"));
  EXPECT_EQ(cache.Admit("72d3162e-cc78-11e3-81ab-4c9367dc0959"), Status::OK());
}

TEST(DeliveryCacheTest, RefusesMissingOrMalformedIds) {
  DeliveryCache cache;
  EXPECT_EQ(cache.Admit(""), Status::InvalidArgument("missing X-GitHub-Delivery header"));
  EXPECT_EQ(cache.Admit(std::string(129, 'a')), Status::InvalidArgument("malformed X-GitHub-Delivery header"));
  EXPECT_EQ(cache.Admit("a\nb"), Status::InvalidArgument("malformed X-GitHub-Delivery header"));
  EXPECT_EQ(cache.size(), 0u);
}

TEST(DeliveryCacheTest, ForgetsTheOldestBeyondCapacity) {
  DeliveryCache cache(2);
  EXPECT_TRUE(cache.Admit("a").ok());
  EXPECT_TRUE(cache.Admit("b").ok());
  EXPECT_TRUE(cache.Admit("c").ok());  // forgets "a"
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.Admit("b").code(), Status::Code::kAlreadyExists);
  EXPECT_EQ(cache.Admit("c").code(), Status::Code::kAlreadyExists);
  EXPECT_TRUE(cache.Admit("a").ok());
}

}  // namespace
}  // namespace tpu::source
