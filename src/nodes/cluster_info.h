// What a joining node needs to trust the control plane, read from the
// kube-public/cluster-info ConfigMap that kubeadm publishes: the CA's public
// key pin ("sha256:<hex of SHA-256 over the CA certificate's DER
// SubjectPublicKeyInfo>", kubeadm's --discovery-token-ca-cert-hash) and the
// API server's address.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tpu::nodes {

struct ClusterInfo {
  std::string ca_hash;  // "sha256:…"
  std::string server;   // "host:port" of the kubeconfig's server URL
};

// `configmap` is the cluster-info ConfigMap; errors name what is missing.
Result<ClusterInfo> ReadClusterInfo(const nlohmann::json& configmap);

// The pin of a PEM certificate's public key.
Result<std::string> CaCertHash(const std::string& pem);

}  // namespace tpu::nodes
