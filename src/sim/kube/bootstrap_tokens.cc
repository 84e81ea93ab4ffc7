// Secrets and bootstrap-token authentication: see bootstrap_tokens.h.
#include "sim/kube/bootstrap_tokens.h"

#include <cctype>

#include "base/base64.h"
#include "base/change_windows.h"
#include "sim/kube/store.h"

namespace tpu::kubesim {
namespace {

bool AllOf(const std::string& s, size_t from, size_t n) {
  for (size_t i = from; i < from + n; ++i)
    if (!(std::islower(static_cast<unsigned char>(s[i])) || std::isdigit(static_cast<unsigned char>(s[i]))))
      return false;
  return true;
}

std::string DataField(const nlohmann::json& secret, const std::string& key) {
  const auto& data = secret.value("data", nlohmann::json::object());
  if (!data.contains(key) || !data[key].is_string()) return "";
  return Base64Decode(data[key].get<std::string>()).value_or("");
}

}  // namespace

void NormalizeSecret(nlohmann::json& secret) {
  if (!secret.is_object() || !secret.contains("stringData")) return;
  nlohmann::json& data = secret["data"];
  if (!data.is_object()) data = nlohmann::json::object();
  for (const auto& [k, v] : secret["stringData"].items())
    if (v.is_string()) data[k] = Base64Encode(v.get<std::string>());
  secret.erase("stringData");
}

BootstrapAuth CheckBootstrapToken(Store& store, const ResourceType& secrets, const std::string& authorization,
                                  int64_t now_s) {
  const std::string prefix = "Bearer ";
  if (authorization.rfind(prefix, 0) != 0) return BootstrapAuth::kNotBootstrap;
  const std::string token = authorization.substr(prefix.size());
  if (token.size() != 23 || token[6] != '.' || !AllOf(token, 0, 6) || !AllOf(token, 7, 16))
    return BootstrapAuth::kNotBootstrap;
  const std::string id = token.substr(0, 6);
  Reply r = store.Get(secrets, "kube-system", "bootstrap-token-" + id);
  if (!r.ok() || r.body.value("type", "") != "bootstrap.kubernetes.io/token") return BootstrapAuth::kInvalid;
  if (DataField(r.body, "token-id") != id || DataField(r.body, "token-secret") != token.substr(7) ||
      DataField(r.body, "usage-bootstrap-authentication") != "true")
    return BootstrapAuth::kInvalid;
  // "If this cannot be parsed, the token should be considered invalid."
  const std::string expiration = DataField(r.body, "expiration");
  if (!expiration.empty()) {
    auto at = ParseRfc3339(expiration);
    if (!at.ok() || *at <= now_s) return BootstrapAuth::kInvalid;
  }
  return BootstrapAuth::kValid;
}

bool BootstrapMayCall(const std::string& method, const std::string& path) {
  const std::string nodes = "/api/v1/nodes";
  if (method == "POST") return path == nodes;
  if (path.rfind(nodes + "/", 0) != 0) return false;
  const std::string rest = path.substr(nodes.size() + 1);
  const size_t slash = rest.find('/');
  if (slash == std::string::npos) return method == "GET";
  return rest.substr(slash) == "/status" && (method == "PUT" || method == "PATCH" || method == "GET");
}

}  // namespace tpu::kubesim
