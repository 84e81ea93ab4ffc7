// kubeconfig and in-cluster configuration: the $KUBECONFIG list, contexts,
// tokens, client certificates, exec plugins, and a rotating token file.
#include "kube/kubeconfig.h"

#include <gtest/gtest.h>

#include <map>

#include "kube/status_errors.h"
#include "kube_test_util.h"

namespace tpu::kube {
namespace {

const ResourceRef& kConfigMaps = resources::kConfigMaps;

TEST(KubeconfigTest, MergesTheListAndPicksTheCurrentContext) {
  testing::TempDir dir;
  FakeEnv env;
  std::string first = dir.Write("a.yaml", R"(
apiVersion: v1
kind: Config
current-context: prod
contexts:
- name: prod
  context: {cluster: prod, user: admin, namespace: batch}
users:
- name: admin
  user:
    client-certificate: certs/admin.crt
    client-key-data: a2V5LXBlbQ==
)");
  std::string second = dir.Write("b.yaml", R"(
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: prod
  cluster:
    server: https://prod.example:6443
    certificate-authority-data: Y2EtcGVt
- name: dev
  cluster: {server: https://dev.example, insecure-skip-tls-verify: true}
contexts:
- name: dev
  context: {cluster: dev, user: dev}
- name: prod
  context: {cluster: dev, user: nobody}
users:
- name: dev
  user: {token: dev-token}
)");
  env.SetVar("KUBECONFIG", first + ":" + dir.path() + "/missing.yaml:" + second);
  auto rc = LoadDefaultConfig(env, "", "");
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  EXPECT_EQ(rc->server, "https://prod.example:6443");  // a.yaml's context wins
  EXPECT_EQ(rc->ca_pem, "ca-pem");
  EXPECT_EQ(rc->default_namespace, "batch");
  EXPECT_EQ(rc->client_cert_file, dir.path() + "/certs/admin.crt");
  EXPECT_EQ(rc->client_key_pem, "key-pem");
  EXPECT_EQ(rc->token, nullptr);

  auto dev = LoadDefaultConfig(env, "", "dev");
  ASSERT_TRUE(dev.ok());
  EXPECT_TRUE(dev->insecure_skip_tls_verify);
  EXPECT_EQ(*dev->token->Token(), "dev-token");

  auto missing = LoadDefaultConfig(env, "", "staging");
  EXPECT_EQ(missing.status().message(), "kubeconfig: context \"staging\" not found");
}

TEST(KubeconfigTest, ExecPluginTokenIsCachedAndRefreshedAfter401) {
  testing::TempDir dir;
  FakeEnv clock;
  // Each run prints the next token: t1, t2, ...; the server accepts only t2.
  std::string plugin = dir.Write("plugin.sh", R"(#!/bin/sh
n=$(cat "$(dirname "$0")/count" 2>/dev/null || echo 0)
n=$((n+1)); echo $n > "$(dirname "$0")/count"
case "$KUBERNETES_EXEC_INFO" in *ExecCredential*) ;; *) exit 3;; esac
echo "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t$n$SUFFIX\",\"expirationTimestamp\":\"2099-01-01T00:00:00Z\"}}"
)", true);
  kubesim::KubeApiServer api(testing::Authorize([](const std::string& h) { return h == "Bearer t2"; }));
  ASSERT_TRUE(api.Start().ok());
  std::string cfg = dir.Write("config", R"(
apiVersion: v1
kind: Config
current-context: gke
clusters: [{name: gke, cluster: {server: ")" + api.url() + R"("}}]
contexts: [{name: gke, context: {cluster: gke, user: gke}}]
users:
- name: gke
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./plugin.sh
      env: [{name: SUFFIX, value: ""}]
      interactiveMode: Never
)");
  auto rc = LoadDefaultConfig(clock, cfg, "");
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  RestClient client(*rc);
  ASSERT_TRUE(client.List(kConfigMaps, "default", {}).ok());  // t1 rejected, t2 accepted
  ASSERT_TRUE(client.List(kConfigMaps, "default", {}).ok());  // t2 from the cache
  auto* exec = dynamic_cast<ExecTokenSource*>(rc->token.get());
  ASSERT_NE(exec, nullptr);
  EXPECT_EQ(exec->runs(), 2);
}

TEST(KubeconfigTest, ExecPluginFailureIsReported) {
  testing::TempDir dir;
  FakeEnv clock;
  dir.Write("bad.sh", "#!/bin/sh\necho 'no credentials' >&2\nexit 1\n", true);
  ExecTokenSource src({"client.authentication.k8s.io/v1", dir.path() + "/bad.sh", {}, {}}, clock);
  auto t = src.Token();
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("no credentials"), std::string::npos);
}

TEST(InClusterTest, ReadsServiceAccountAndFollowsTokenRotation) {
  testing::TempDir sa;
  sa.Write("token", "first\n");
  sa.Write("ca.crt", "pem");
  sa.Write("namespace", "kueue-system");
  std::string accepted = "Bearer first";
  kubesim::KubeApiServer api(testing::Authorize([&](const std::string& h) { return h == accepted; }));
  ASSERT_TRUE(api.Start().ok());
  FakeEnv env({{"KUBERNETES_SERVICE_HOST", "127.0.0.1"}, {"KUBERNETES_SERVICE_PORT", std::to_string(api.port())}});
  auto rc = InClusterConfig(env, sa.path());
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  EXPECT_EQ(rc->server, "https://127.0.0.1:" + std::to_string(api.port()));
  EXPECT_EQ(rc->ca_file, sa.path() + "/ca.crt");
  EXPECT_EQ(rc->default_namespace, "kueue-system");
  // The emulator speaks plain HTTP; everything else is the in-cluster config.
  rc->server = api.url();
  RestClient client(*rc);
  ASSERT_TRUE(client.List(kConfigMaps, "default", {}).ok());
  // kubelet rotates the token: the next request carries the new one.
  sa.Write("token", "second\n");
  accepted = "Bearer second";
  ASSERT_TRUE(client.List(kConfigMaps, "default", {}).ok());

  FakeEnv elsewhere;
  auto outside = InClusterConfig(elsewhere, sa.path());
  EXPECT_TRUE(IsNotFound(outside.status()));
}

}  // namespace
}  // namespace tpu::kube
