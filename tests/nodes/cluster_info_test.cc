// cluster-info → the CA pin and the API server address a joining node needs.
#include "nodes/cluster_info.h"

#include <gtest/gtest.h>

#include "nodes/cluster_ca.h"

namespace tpu::nodes {
namespace {

TEST(ClusterInfo, PinsTheCaPublicKeyAsKubeadmDoes) {
  auto info = ReadClusterInfo(testing::ClusterInfoConfigMap("https://10.0.0.2:6443"));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->ca_hash, testing::kTestCaHash);
  EXPECT_EQ(info->server, "10.0.0.2:6443");
}

TEST(ClusterInfo, SaysWhatIsMissing) {
  nlohmann::json cm = testing::ClusterInfoConfigMap();
  cm["data"].erase("kubeconfig");
  EXPECT_EQ(ReadClusterInfo(cm).status().message(),
            "cluster-info: data.kubeconfig is missing (was the cluster made by kubeadm?)");
  cm["data"]["kubeconfig"] = "clusters:\n- cluster:\n    certificate-authority-data: '*'\n";
  EXPECT_EQ(ReadClusterInfo(cm).status().message(),
            "cluster-info: certificate-authority-data is missing or not base64");
  cm["data"]["kubeconfig"] = "clusters:\n- cluster:\n    certificate-authority-data: bm90IGEgY2VydA==\n";
  EXPECT_EQ(ReadClusterInfo(cm).status().message(), "cluster-info: the CA certificate is not a PEM certificate");
}

}  // namespace
}  // namespace tpu::nodes
