// Bootstrap tokens: see bootstrap_token.h.
#include "nodes/bootstrap_token.h"

#include <openssl/rand.h>

#include <stdexcept>

#include "base/base64.h"
#include "base/change_windows.h"

namespace tpu::nodes {
namespace {

std::string RandomAlnum(size_t n) {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string out;
  while (out.size() < n) {
    unsigned char buf[32];
    if (RAND_bytes(buf, sizeof buf) != 1) throw std::runtime_error("RAND_bytes failed");
    // 252 = 7 × 36: dropping larger bytes keeps every character equally likely.
    for (unsigned char b : buf)
      if (b < 252 && out.size() < n) out += kChars[b % 36];
  }
  return out;
}

std::string Field(const nlohmann::json& secret, const char* key) {
  const auto& data = secret.value("data", nlohmann::json::object());
  if (data.contains(key) && data[key].is_string()) return Base64Decode(data[key].get<std::string>()).value_or("");
  const auto& plain = secret.value("stringData", nlohmann::json::object());
  return plain.contains(key) && plain[key].is_string() ? plain[key].get<std::string>() : "";
}

}  // namespace

BootstrapToken NewBootstrapToken() { return {RandomAlnum(6), RandomAlnum(16)}; }

nlohmann::json BootstrapSecret(const BootstrapToken& token, const std::string& group, const std::string& instance,
                               int64_t expires_s) {
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata",
           {{"name", "bootstrap-token-" + token.id},
            {"namespace", "kube-system"},
            {"labels", {{kGroupLabel, group}, {kInstanceLabel, instance}}}}},
          {"type", "bootstrap.kubernetes.io/token"},
          {"stringData",
           {{"description", "tpu-provisioner: join of " + instance},
            {"token-id", token.id},
            {"token-secret", token.secret},
            {"expiration", FormatRfc3339(expires_s)},
            {"usage-bootstrap-authentication", "true"},
            {"usage-bootstrap-signing", "true"},
            {"auth-extra-groups", "system:bootstrappers:kubeadm:default-node-token"}}}};
}

std::optional<TokenSecret> ReadBootstrapSecret(const nlohmann::json& secret) {
  if (secret.value("type", "") != "bootstrap.kubernetes.io/token") return std::nullopt;
  const auto& meta = secret.value("metadata", nlohmann::json::object());
  const auto& labels = meta.value("labels", nlohmann::json::object());
  TokenSecret t;
  t.name = meta.value("name", "");
  t.group = labels.value(kGroupLabel, "");
  t.instance = labels.value(kInstanceLabel, "");
  t.token = {Field(secret, "token-id"), Field(secret, "token-secret")};
  auto expires = ParseRfc3339(Field(secret, "expiration"));
  if (t.group.empty() || t.instance.empty() || t.token.id.empty() || !expires.ok()) return std::nullopt;
  t.expires_s = *expires;
  return t;
}

}  // namespace tpu::nodes
