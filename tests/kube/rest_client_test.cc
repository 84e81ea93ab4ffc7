// RestClient against the Kubernetes API emulator: verbs, errors carrying the
// API's Status message, pagination, apply conflicts, watch, discovery.
#include "kube/rest_client.h"

#include <gtest/gtest.h>

#include "kube/status_errors.h"
#include "kube_test_util.h"

namespace tpu::kube {
namespace {

const ResourceRef& kConfigMaps = resources::kConfigMaps;

json ConfigMap(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}},
          {"data", {{"k", "v"}}}};
}

TEST(RestClientTest, CrudAndErrors) {
  testing::Cluster c;
  auto created = c.client->Create(kConfigMaps, "default", ConfigMap("a"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto dup = c.client->Create(kConfigMaps, "default", ConfigMap("a"));
  EXPECT_TRUE(IsAlreadyExists(dup.status()));
  EXPECT_EQ(dup.status().message(),
            "POST /api/v1/namespaces/default/configmaps?fieldManager=tpu-provisioner: "
            "409 AlreadyExists: configmaps \"a\" already exists");
  auto patched = c.client->MergePatch(kConfigMaps, "default", "a", {{"data", {{"k", "w"}}}});
  ASSERT_TRUE(patched.ok());
  EXPECT_EQ((*patched)["data"]["k"], "w");
  json stale = *created;
  stale["data"]["k"] = "x";
  EXPECT_TRUE(IsConflict(c.client->Update(kConfigMaps, "default", stale).status()));
  ASSERT_TRUE(c.client->Delete(kConfigMaps, "default", "a").ok());
  EXPECT_TRUE(IsNotFound(c.client->Get(kConfigMaps, "default", "a").status()));
}

TEST(RestClientTest, ListFollowsPages) {
  testing::Cluster c;
  for (int i = 0; i < 7; ++i) c.client->Create(kConfigMaps, "default", ConfigMap("m" + std::to_string(i)));
  ListOptions o;
  o.page_size = 3;
  auto list = c.client->List(kConfigMaps, "default", o);
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->items.size(), 7u);
  EXPECT_FALSE(list->resource_version.empty());
}

TEST(RestClientTest, ApplyConflictCarriesTheServerMessage) {
  testing::Cluster c;
  json cm = ConfigMap("a");
  ApplyOptions human{"alice", false, ""};
  ASSERT_TRUE(c.client->Apply(kConfigMaps, "default", cm, human).ok());
  cm["data"]["k"] = "mine";
  auto conflict = c.client->Apply(kConfigMaps, "default", cm, {kFieldManager, false, ""});
  EXPECT_TRUE(IsConflict(conflict.status()));
  EXPECT_NE(conflict.status().message().find("conflict with \"alice\": .data.k"), std::string::npos);
  auto forced = c.client->Apply(kConfigMaps, "default", cm);
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ((*forced)["data"]["k"], "mine");
}

TEST(RestClientTest, WatchDeliversEventsAndGone) {
  testing::Cluster c;
  auto a = c.client->Create(kConfigMaps, "default", ConfigMap("a"));
  std::string rv = (*a)["metadata"]["resourceVersion"];
  c.client->Create(kConfigMaps, "default", ConfigMap("b"));
  std::vector<std::string> seen;
  WatchOptions o;
  o.resource_version = rv;
  Status s = c.client->Watch(kConfigMaps, "default", o, [&](const WatchEvent& e) {
    seen.push_back(e.type + " " + e.object["metadata"]["name"].get<std::string>());
    return false;
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(seen, std::vector<std::string>{"ADDED b"});

  c.api.store().TEST_Compact();
  c.client->Create(kConfigMaps, "default", ConfigMap("c"));
  s = c.client->Watch(kConfigMaps, "default", o, [](const WatchEvent&) { return true; });
  EXPECT_TRUE(IsGone(s)) << s.ToString();
}

TEST(RestClientTest, ServedVersions) {
  testing::Cluster both(testing::KueueVersions({"v1beta2", "v1beta1"}));
  auto v = both.client->ServedVersions("kueue.x-k8s.io");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, (std::vector<std::string>{"v1beta2", "v1beta1"}));
  testing::Cluster none(testing::KueueVersions({}));
  EXPECT_TRUE(none.client->ServedVersions("kueue.x-k8s.io")->empty());
}

}  // namespace
}  // namespace tpu::kube
