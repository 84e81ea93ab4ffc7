// Secrets as the API server stores them, and bootstrap-token authentication
// (kubernetes.io/docs/reference/access-authn-authz/bootstrap-tokens; docs/emulator.md,
// "Kubernetes: Secrets and bootstrap tokens").
//
// A bearer token of the form [a-z0-9]{6}.[a-z0-9]{16} is a bootstrap token:
// valid while kube-system/bootstrap-token-<id> exists, has type
// bootstrap.kubernetes.io/token, the same token-secret,
// usage-bootstrap-authentication "true" and an expiration not yet passed.
// What a valid one may do is narrowed here to what a joining kubelet does
// (register its Node and write its status), standing in for the real chain
// (CSR, certificate, node authorizer) that the emulator leaves out.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace tpu::kubesim {

class Store;
struct ResourceType;

// stringData merged into data (base64), then dropped: the API never returns it.
void NormalizeSecret(nlohmann::json& secret);

enum class BootstrapAuth { kNotBootstrap, kValid, kInvalid };
// `authorization` is the request's header; `now_s` Unix seconds.
BootstrapAuth CheckBootstrapToken(Store& store, const ResourceType& secrets, const std::string& authorization,
                                  int64_t now_s);

// Whether a request a bootstrap token authenticated may go on: create a Node,
// read one, or write one's status.
bool BootstrapMayCall(const std::string& method, const std::string& path);

}  // namespace tpu::kubesim
