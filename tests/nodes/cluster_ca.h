// A fixed CA certificate and the kube-public/cluster-info ConfigMap kubeadm
// would publish for it, for tests of the node join. kTestCaHash was computed
// outside our code, with kubeadm's documented recipe:
//   openssl x509 -pubkey -in ca.crt | openssl pkey -pubin -outform der | sha256sum
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/base64.h"

namespace tpu::nodes::testing {

inline constexpr const char* kTestCaPem =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBgDCCASegAwIBAgIUMHG7mYBzFA4JBrvWVRGCny1Ow5IwCgYIKoZIzj0EAwIw\n"
    "FTETMBEGA1UEAwwKa3ViZXJuZXRlczAgFw0yNjExMjUyMTM4NTdaGA8yMTI2MTEw\n"
    "MTIxMzg1N1owFTETMBEGA1UEAwwKa3ViZXJuZXRlczBZMBMGByqGSM49AgEGCCqG\n"
    "SM49AwEHA0IABG1/6eh0Q7kfDrOsuZlkcEbbKToV+vIWO/2yZh+89G6oTxldUGlg\n"
    "KFrdg1r5YhRSS1Vqawy9XfXoIS32tZDsoICjUzBRMB0GA1UdDgQWBBRJSYfptSkS\n"
    "PQHusLpqeZRCotg69TAfBgNVHSMEGDAWgBRJSYfptSkSPQHusLpqeZRCotg69TAP\n"
    "BgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0cAMEQCIH4y5656ZjuZdItot8LV\n"
    "kJLexsQ6IEpzglkJGqAQs9nKAiA6nfQKqpuEUpBktRksENemq1MJZmyKGr/ru4m+\n"
    "PKr4Ng==\n"
    "-----END CERTIFICATE-----\n";

inline constexpr const char* kTestCaHash =
    "sha256:fa6dbcf39ddafa33609e3514e2424033381fadcc4a0bc59326e7db509721cbe0";

inline nlohmann::json ClusterInfoConfigMap(const std::string& server = "https://10.0.0.2:6443") {
  const std::string kubeconfig = "apiVersion: v1\nkind: Config\nclusters:\n- name: \"\"\n  cluster:\n"
                                 "    certificate-authority-data: " + Base64Encode(kTestCaPem) + "\n"
                                 "    server: " + server + "\ncontexts: null\nusers: null\n";
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", "cluster-info"}, {"namespace", "kube-public"}}},
          {"data", {{"kubeconfig", kubeconfig}}}};
}

}  // namespace tpu::nodes::testing
