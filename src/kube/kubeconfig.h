// Finding the API server and credentials: kubeconfig files (the $KUBECONFIG
// list merged as kubectl merges it, a context, token / token file / client
// certificate / exec plugin) and the in-cluster service account.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "kube/timestamps.h"
#include "kube/rest_config.h"

namespace tpu::kube {

// Reads an environment variable; injected so tests need not touch the process's.
using Getenv = std::function<std::optional<std::string>(const std::string&)>;
Getenv ProcessEnv();

inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

// Merges `paths` in order (the first file to name a cluster, user or context
// wins; current-context from the first file that sets it) and resolves
// `context` (empty: current-context). Relative file paths are relative to the
// file that names them. `clock` must outlive the exec token source.
Result<RestConfig> LoadKubeconfig(const std::vector<std::string>& paths, const std::string& context,
                                  Clock& clock);

// KUBERNETES_SERVICE_HOST/PORT, and token, ca.crt and namespace from `sa_dir`.
// The token file is re-read as kubelet rotates it.
Result<RestConfig> InClusterConfig(const Getenv& env, const std::string& sa_dir = kServiceAccountDir);

// The usual order: `kubeconfig_flag`, then $KUBECONFIG (a ':' list), then the
// in-cluster service account when KUBERNETES_SERVICE_HOST is set, then
// $HOME/.kube/config.
Result<RestConfig> LoadDefaultConfig(const Getenv& env, const std::string& kubeconfig_flag,
                                     const std::string& context, Clock& clock);

}  // namespace tpu::kube
