// cluster-info: see cluster_info.h.
#include "nodes/cluster_info.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <memory>

#include "base/base64.h"

namespace tpu::nodes {

Result<std::string> CaCertHash(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())),
                                                &BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr),
                                                   &X509_free);
  if (!cert) return Status::InvalidArgument("cluster-info: the CA certificate is not a PEM certificate");
  unsigned char* der = nullptr;
  const int n = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(cert.get()), &der);
  if (n <= 0) return Status::InvalidArgument("cluster-info: the CA certificate has no public key");
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(der, static_cast<size_t>(n), digest, &len, EVP_sha256(), nullptr);
  OPENSSL_free(der);
  std::string hex = "sha256:";
  char buf[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", digest[i]);
    hex += buf;
  }
  return hex;
}

Result<ClusterInfo> ReadClusterInfo(const nlohmann::json& configmap) {
  const auto& data = configmap.value("data", nlohmann::json::object());
  if (!data.contains("kubeconfig") || !data["kubeconfig"].is_string())
    return Status::InvalidArgument("cluster-info: data.kubeconfig is missing (was the cluster made by kubeadm?)");
  YAML::Node kc;
  try {
    kc = YAML::Load(data["kubeconfig"].get<std::string>());
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(std::string("cluster-info: data.kubeconfig is not YAML: ") + e.what());
  }
  const YAML::Node clusters = kc["clusters"];
  if (!clusters || !clusters.IsSequence() || clusters.size() == 0 || !clusters[0]["cluster"])
    return Status::InvalidArgument("cluster-info: data.kubeconfig has no clusters[0].cluster");
  const YAML::Node cluster = clusters[0]["cluster"];
  const std::string ca = cluster["certificate-authority-data"] ? cluster["certificate-authority-data"].as<std::string>() : "";
  auto pem = Base64Decode(ca);
  if (ca.empty() || !pem) return Status::InvalidArgument("cluster-info: certificate-authority-data is missing or not base64");
  auto hash = CaCertHash(*pem);
  if (!hash.ok()) return hash.status();
  ClusterInfo info;
  info.ca_hash = *hash;
  std::string server = cluster["server"] ? cluster["server"].as<std::string>() : "";
  if (auto scheme = server.find("://"); scheme != std::string::npos) server = server.substr(scheme + 3);
  info.server = server.substr(0, server.find('/'));
  return info;
}

}  // namespace tpu::nodes
