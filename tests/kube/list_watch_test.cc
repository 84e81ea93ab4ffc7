// ListWatcher: a cache kept by list + watch; bookmarks; re-list after 410.
#include "kube/list_watch.h"

#include <gtest/gtest.h>

#include "kube_test_util.h"

namespace tpu::kube {
namespace {

const ResourceRef& kConfigMaps = resources::kConfigMaps;

json ConfigMap(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}};
}

TEST(ListWatchTest, ListsThenFollowsChanges) {
  testing::Cluster c;
  c.client->Create(kConfigMaps, "default", ConfigMap("a"));
  ListWatcher w(*c.client, kConfigMaps, "default");
  // The watch starts after the list, so create "b" from inside the first callback.
  bool created = false;
  ASSERT_TRUE(w.Step([&](const WatchEvent& e) {
                 if (e.type == "RELISTED" && !created) {
                   created = c.client->Create(kConfigMaps, "default", ConfigMap("b")).ok();
                   return true;
                 }
                 return e.type != "ADDED";  // stop at b's ADDED
               }).ok());
  EXPECT_EQ(w.lists(), 1);
  EXPECT_EQ(w.objects().size(), 2u);
  EXPECT_TRUE(w.objects().count("default/b"));
}

TEST(ListWatchTest, RelistsAfterGone) {
  testing::Cluster c;
  c.client->Create(kConfigMaps, "default", ConfigMap("a"));
  ListWatcher w(*c.client, kConfigMaps, "default");
  ASSERT_TRUE(w.Step([](const WatchEvent& e) { return e.type == "RELISTED"; }, 0).ok());
  ASSERT_EQ(w.lists(), 1);
  std::string old_version = w.resource_version();

  // While nobody watches, "a" goes, "z" comes, and the history is compacted:
  // resuming from the old version is impossible.
  c.client->Delete(kConfigMaps, "default", "a");
  c.client->Create(kConfigMaps, "default", ConfigMap("z"));
  c.api.store().TEST_Compact();
  ASSERT_TRUE(w.Step([](const WatchEvent&) { return true; }, 0).ok());
  EXPECT_EQ(w.lists(), 2);
  EXPECT_NE(w.resource_version(), old_version);
  ASSERT_EQ(w.objects().size(), 1u);
  EXPECT_TRUE(w.objects().count("default/z"));
}

TEST(ListWatchTest, BookmarksAdvanceTheVersion) {
  kubesim::KubeApiServer::Options o;
  o.bookmark_interval = std::chrono::milliseconds(5);
  testing::Cluster c(o);
  const ResourceRef kNodes{"", "v1", "nodes", "Node", false};
  ListWatcher w(*c.client, kNodes);
  ASSERT_TRUE(w.Step([](const WatchEvent& e) { return e.type == "RELISTED"; }, 0).ok());
  std::string before = w.resource_version();
  // Objects of another kind change; our watch only hears of it via bookmarks.
  c.client->Create(kConfigMaps, "default", ConfigMap("a"));
  int events = 0;
  // A bookmark is invisible to on_change; the server ends the stream after 1s.
  ASSERT_TRUE(w.Step([&](const WatchEvent&) { return ++events < 100; }, 1).ok());
  EXPECT_EQ(events, 0);
  EXPECT_GT(std::stoull(w.resource_version()), std::stoull(before));
}

}  // namespace
}  // namespace tpu::kube
