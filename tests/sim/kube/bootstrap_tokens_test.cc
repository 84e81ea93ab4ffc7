// The emulator's Secrets (stringData folded into data) and bootstrap-token
// authentication: what a joining node may do with the token it was given.
#include "sim/kube/bootstrap_tokens.h"

#include <gtest/gtest.h>

#include "base/change_windows.h"
#include "sim/kube/api_server.h"
#include "sim/kube/api_test_util.h"

namespace tpu::kubesim {
namespace {

using testing::Raw;

const char* kSecrets = "/api/v1/namespaces/kube-system/secrets";

json TokenSecret(const std::string& id, const std::string& secret, const std::string& expiration) {
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata", {{"name", "bootstrap-token-" + id}, {"namespace", "kube-system"}}},
          {"type", "bootstrap.kubernetes.io/token"},
          {"stringData",
           {{"token-id", id},
            {"token-secret", secret},
            {"expiration", expiration},
            {"usage-bootstrap-authentication", "true"},
            {"usage-bootstrap-signing", "true"}}}};
}

json NodeNamed(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}},
          {"spec", {{"providerID", "gce://p/z/" + name}}}};
}

std::string InAnHour() {
  return FormatRfc3339(std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch()).count() + 3600);
}

class BootstrapTokensTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(api_.Start().ok()); }
  KubeApiServer api_{{}};
};

TEST_F(BootstrapTokensTest, StringDataIsStoredAsBase64DataAndNeverReturned) {
  Raw admin(api_.port());
  auto created = admin.Post(kSecrets, TokenSecret("abcdef", "0123456789abcdef", InAnHour()));
  ASSERT_EQ(created.code, 201);
  EXPECT_FALSE(created.body.contains("stringData"));
  EXPECT_EQ(created.body["data"]["token-id"], "YWJjZGVm");  // base64("abcdef")
  auto read = admin.Get(std::string(kSecrets) + "/bootstrap-token-abcdef");
  EXPECT_EQ(read.body["data"]["usage-bootstrap-authentication"], "dHJ1ZQ==");
}

TEST_F(BootstrapTokensTest, AValidTokenRegistersANodeAndWritesOnlyItsStatus) {
  Raw admin(api_.port());
  ASSERT_EQ(admin.Post(kSecrets, TokenSecret("abcdef", "0123456789abcdef", InAnHour())).code, 201);
  Raw node(api_.port());
  node.SetBearer("abcdef.0123456789abcdef");
  EXPECT_EQ(node.Post("/api/v1/nodes", NodeNamed("vm-1")).code, 201);
  json status = NodeNamed("vm-1");
  status["status"] = {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}};
  EXPECT_EQ(node.Put("/api/v1/nodes/vm-1/status", status).code, 200);
  // Nothing else: not Secrets, not another object kind, not deleting Nodes.
  EXPECT_EQ(node.Get(kSecrets).code, 403);
  EXPECT_EQ(node.Delete("/api/v1/nodes/vm-1").code, 403);
  EXPECT_EQ(node.Post("/api/v1/namespaces/default/configmaps", json::object()).code, 403);
}

TEST_F(BootstrapTokensTest, AWrongSecretAnExpiredOrADeletedTokenIsRejected) {
  Raw admin(api_.port());
  ASSERT_EQ(admin.Post(kSecrets, TokenSecret("abcdef", "0123456789abcdef", InAnHour())).code, 201);
  ASSERT_EQ(admin.Post(kSecrets, TokenSecret("old000", "0123456789abcdef", "2020-01-01T00:00:00Z")).code, 201);
  Raw wrong(api_.port());
  wrong.SetBearer("abcdef.ffffffffffffffff");
  EXPECT_EQ(wrong.Post("/api/v1/nodes", NodeNamed("vm-1")).code, 401);
  Raw expired(api_.port());
  expired.SetBearer("old000.0123456789abcdef");
  EXPECT_EQ(expired.Post("/api/v1/nodes", NodeNamed("vm-1")).code, 401);
  ASSERT_EQ(admin.Delete(std::string(kSecrets) + "/bootstrap-token-abcdef").code, 200);
  Raw deleted(api_.port());
  deleted.SetBearer("abcdef.0123456789abcdef");
  EXPECT_EQ(deleted.Post("/api/v1/nodes", NodeNamed("vm-1")).code, 401);
}

TEST(BootstrapMayCall, OnlyNodeRegistrationPaths) {
  EXPECT_TRUE(BootstrapMayCall("POST", "/api/v1/nodes"));
  EXPECT_TRUE(BootstrapMayCall("GET", "/api/v1/nodes/vm-1"));
  EXPECT_TRUE(BootstrapMayCall("PATCH", "/api/v1/nodes/vm-1/status"));
  EXPECT_FALSE(BootstrapMayCall("PATCH", "/api/v1/nodes/vm-1"));
  EXPECT_FALSE(BootstrapMayCall("GET", "/api/v1/nodes"));
  EXPECT_FALSE(BootstrapMayCall("POST", "/api/v1/namespaces/kube-system/secrets"));
}

}  // namespace
}  // namespace tpu::kubesim
