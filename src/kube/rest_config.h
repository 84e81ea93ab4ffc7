// How to reach and authenticate to one API server: what a kubeconfig context
// or the in-cluster service account resolves to.
#pragma once

#include <memory>
#include <string>

#include "kube/token_source.h"

namespace tpu::kube {

struct RestConfig {
  std::string server;  // "https://10.0.0.1:443"
  // Server verification: a CA bundle as a file or as PEM text.
  std::string ca_file;
  std::string ca_pem;
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  // Client certificate authentication, as files or PEM text.
  std::string client_cert_file;
  std::string client_key_file;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::shared_ptr<TokenSource> token;  // null: no bearer token
  std::string default_namespace = "default";
  std::string user_agent = "tpu-provisioner";
};

}  // namespace tpu::kube
