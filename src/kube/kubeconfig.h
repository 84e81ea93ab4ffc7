// Finding the API server and credentials: kubeconfig files (the $KUBECONFIG
// list merged as kubectl merges it, a context, token / token file / client
// certificate / exec plugin) and the in-cluster service account.
#pragma once

#include <string>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "kube/rest_config.h"

namespace tpu::kube {

inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

// Merges `paths` in order (the first file to name a cluster, user or context
// wins; current-context from the first file that sets it) and resolves
// `context` (empty: current-context). Relative file paths are relative to the
// file that names them. Files are read through `env`, which is also the exec
// token source's clock, so it must outlive the config.
Result<RestConfig> LoadKubeconfig(const std::vector<std::string>& paths, const std::string& context,
                                  Env& env);

// KUBERNETES_SERVICE_HOST/PORT, and token, ca.crt and namespace from `sa_dir`.
// The token file is re-read as kubelet rotates it.
Result<RestConfig> InClusterConfig(Env& env, const std::string& sa_dir = kServiceAccountDir);

// The usual order: `kubeconfig_flag`, then $KUBECONFIG (a ':' list), then the
// in-cluster service account when KUBERNETES_SERVICE_HOST is set, then
// $HOME/.kube/config.
Result<RestConfig> LoadDefaultConfig(Env& env, const std::string& kubeconfig_flag,
                                     const std::string& context);

}  // namespace tpu::kube
