// kubeadm bootstrap tokens for joining TPUNodeGroup VMs (docs/architecture.md,
// "TPUNodeGroup nodes"): "<id>.<secret>", [a-z0-9]{6}.[a-z0-9]{16}, kept in
// the Secret kube-system/bootstrap-token-<id> with kubeadm's usages and a 1 h
// expiry. Each Secret is labelled with its group and instance: one token per
// instance, found again after a restart instead of minted twice.
//
// The secret half never reaches a log, /status or /metrics: BootstrapToken
// has no printer, and only Value() spells it out (for the Secret and the
// instance's metadata).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace tpu::nodes {

inline constexpr const char* kGroupLabel = "tpu-provisioner.dev/node-group";
inline constexpr const char* kInstanceLabel = "tpu-provisioner.dev/instance";
inline constexpr int64_t kTokenLifetimeSeconds = 3600;

struct BootstrapToken {
  std::string id;      // public: names the Secret
  std::string secret;  // private
  std::string Value() const { return id + "." + secret; }
};

// A fresh token from the system's CSPRNG.
BootstrapToken NewBootstrapToken();

// The Secret for `token`, expiring at `expires_s` (Unix seconds).
nlohmann::json BootstrapSecret(const BootstrapToken& token, const std::string& group, const std::string& instance,
                               int64_t expires_s);

// What a listed Secret says; nullopt when it is not one of ours or is malformed.
struct TokenSecret {
  std::string name;  // bootstrap-token-<id>
  std::string group, instance;
  BootstrapToken token;
  int64_t expires_s = 0;
};
std::optional<TokenSecret> ReadBootstrapSecret(const nlohmann::json& secret);

}  // namespace tpu::nodes
