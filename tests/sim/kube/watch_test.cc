// Watch streams in the emulator: initial state, resuming from a version,
// bookmarks, and 410 Gone once the history window has moved past the start.
#include <gtest/gtest.h>

#include "sim/kube/api_test_util.h"
#include "sim/kube/api_server.h"

namespace tpu::kubesim {
namespace {

const std::string kCMs = "/api/v1/namespaces/default/configmaps";

json ConfigMap(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}};
}

class WatchTest : public ::testing::Test {
 protected:
  void Start(KubeApiServer::Options o) {
    api_ = std::make_unique<KubeApiServer>(o);
    ASSERT_TRUE(api_->Start().ok());
    raw_ = std::make_unique<testing::Raw>(api_->port());
  }
  std::unique_ptr<KubeApiServer> api_;
  std::unique_ptr<testing::Raw> raw_;
};

TEST_F(WatchTest, StartsWithCurrentStateThenResumes) {
  Start({});
  raw_->Post(kCMs, ConfigMap("a"));
  auto first = raw_->Watch(kCMs + "?watch=true", [](const json&) { return true; });
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0]["type"], "ADDED");
  std::string rv = first[0]["object"]["metadata"]["resourceVersion"];

  raw_->Post(kCMs, ConfigMap("b"));
  raw_->Delete(kCMs + "/a");
  auto next = raw_->Watch(kCMs + "?watch=1&resourceVersion=" + rv,
                          [](const json& e) { return e["type"] == "DELETED"; });
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0]["type"], "ADDED");
  EXPECT_EQ(next[0]["object"]["metadata"]["name"], "b");
  EXPECT_EQ(next[1]["object"]["metadata"]["name"], "a");
}

TEST_F(WatchTest, BookmarksWhenAsked) {
  KubeApiServer::Options o;
  o.bookmark_interval = std::chrono::milliseconds(5);
  Start(o);
  auto created = raw_->Post(kCMs, ConfigMap("a"));
  std::string rv = created.body["metadata"]["resourceVersion"];
  auto events = raw_->Watch(kCMs + "?watch=true&allowWatchBookmarks=true&resourceVersion=" + rv,
                            [](const json& e) { return e["type"] == "BOOKMARK"; });
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back()["object"]["kind"], "ConfigMap");
  EXPECT_EQ(events.back()["object"]["metadata"]["resourceVersion"], rv);
}

TEST_F(WatchTest, TooOldVersionIsGone) {
  KubeApiServer::Options o;
  o.history_limit = 2;
  Start(o);
  auto a = raw_->Post(kCMs, ConfigMap("a"));
  std::string rv = a.body["metadata"]["resourceVersion"];
  for (const char* n : {"b", "c", "d"}) raw_->Post(kCMs, ConfigMap(n));
  auto events = raw_->Watch(kCMs + "?watch=true&resourceVersion=" + rv,
                            [](const json&) { return true; });
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "ERROR");
  EXPECT_EQ(events[0]["object"]["code"], 410);
  EXPECT_EQ(events[0]["object"]["reason"], "Expired");
}

TEST_F(WatchTest, TimeoutSecondsEndsTheStream) {
  Start({});
  auto a = raw_->Post(kCMs, ConfigMap("a"));
  api_->store().TEST_Compact();
  // Nothing happens and the stream ends by itself: the client sees no events.
  auto events = raw_->Watch(kCMs + "?watch=true&timeoutSeconds=0&resourceVersion=" +
                                a.body["metadata"]["resourceVersion"].get<std::string>(),
                            [](const json&) { return true; });
  EXPECT_TRUE(events.empty());
}

}  // namespace
}  // namespace tpu::kubesim
