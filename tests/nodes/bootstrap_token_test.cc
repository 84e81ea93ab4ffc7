// Bootstrap tokens: kubeadm's format, and the Secret read back as written.
#include "nodes/bootstrap_token.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

namespace tpu::nodes {
namespace {

TEST(BootstrapToken, MatchesKubeadmsFormatAndNeverRepeats) {
  const std::regex format("[a-z0-9]{6}\\.[a-z0-9]{16}");
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    const std::string t = NewBootstrapToken().Value();
    EXPECT_TRUE(std::regex_match(t, format)) << t;
    EXPECT_TRUE(seen.insert(t).second);
  }
}

TEST(BootstrapToken, SecretHasKubeadmsUsagesAndReadsBack) {
  const BootstrapToken token{"abc123", "0123456789abcdef"};
  const nlohmann::json s = BootstrapSecret(token, "train", "train-x7k2", 1800000000);
  EXPECT_EQ(s["metadata"]["name"], "bootstrap-token-abc123");
  EXPECT_EQ(s["metadata"]["namespace"], "kube-system");
  EXPECT_EQ(s["type"], "bootstrap.kubernetes.io/token");
  EXPECT_EQ(s["stringData"]["usage-bootstrap-authentication"], "true");
  EXPECT_EQ(s["stringData"]["usage-bootstrap-signing"], "true");
  EXPECT_EQ(s["stringData"]["auth-extra-groups"], "system:bootstrappers:kubeadm:default-node-token");
  EXPECT_EQ(s["stringData"]["expiration"], "2027-01-15T08:00:00Z");
  auto back = ReadBootstrapSecret(s);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->token.Value(), "abc123.0123456789abcdef");
  EXPECT_EQ(back->group, "train");
  EXPECT_EQ(back->instance, "train-x7k2");
  EXPECT_EQ(back->expires_s, 1800000000);
}

TEST(BootstrapToken, SecretsNotOursAreIgnored) {
  nlohmann::json s = BootstrapSecret({"abc123", "0123456789abcdef"}, "train", "vm", 1800000000);
  s["metadata"].erase("labels");  // kubeadm's own token
  EXPECT_FALSE(ReadBootstrapSecret(s));
  EXPECT_FALSE(ReadBootstrapSecret({{"type", "Opaque"}}));
}

}  // namespace
}  // namespace tpu::nodes
