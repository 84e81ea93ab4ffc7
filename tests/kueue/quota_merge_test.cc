// The read-modify-apply of Kueue's atomic resourceGroups: unit cases of
// MergeResourceGroups, and a person editing the queue between our read and
// our apply (the resourceVersion precondition makes us re-read, not overwrite).
#include <gtest/gtest.h>

#include "kube/status_errors.h"
#include "kueue/quota_sync.h"
#include "kueue/kueue_test_util.h"

namespace tpu::kueue {
namespace {

namespace testing = kube::testing;

FlavorQuota Flavor(const std::string& name, int64_t quota) {
  FlavorQuota f;
  f.flavor = name;
  f.nominal_quota = quota;
  return f;
}

TEST(MergeResourceGroupsTest, AddsAGroupWhenNoneCoversTheResource) {
  json cpu = json::parse(R"([{"coveredResources":["cpu"],"flavors":[{"name":"d","resources":[{"name":"cpu","nominalQuota":"9"}]}]}])");
  json out = MergeResourceGroups(cpu, {Flavor("a", 8)}, "google.com/tpu", {});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], cpu[0]);
  EXPECT_EQ(out[1], json::parse(R"({"coveredResources":["google.com/tpu"],
      "flavors":[{"name":"a","resources":[{"name":"google.com/tpu","nominalQuota":"8"}]}]})"));
}

TEST(MergeResourceGroupsTest, SharedGroupKeepsOtherResourcesAndDropsOldFlavors) {
  json groups = json::parse(R"([{"coveredResources":["cpu","google.com/tpu"],"flavors":[
      {"name":"a","resources":[{"name":"cpu","nominalQuota":"100"},{"name":"google.com/tpu","nominalQuota":"4","lendingLimit":"2"}]},
      {"name":"old","resources":[{"name":"cpu","nominalQuota":"1"},{"name":"google.com/tpu","nominalQuota":"4"}]},
      {"name":"theirs","resources":[{"name":"cpu","nominalQuota":"1"},{"name":"google.com/tpu","nominalQuota":"4"}]}]}])");
  json out = MergeResourceGroups(groups, {Flavor("a", 16), Flavor("b", 8)}, "google.com/tpu", {"a", "old"});
  const json& flavors = out[0]["flavors"];
  ASSERT_EQ(flavors.size(), 3u);
  EXPECT_EQ(flavors[0], json::parse(R"({"name":"a","resources":[{"name":"cpu","nominalQuota":"100"},
      {"name":"google.com/tpu","nominalQuota":"16","lendingLimit":"2"}]})"));
  EXPECT_EQ(flavors[1]["name"], "theirs");
  // A new flavor lists every covered resource, in order, as Kueue requires.
  EXPECT_EQ(flavors[2], json::parse(R"({"name":"b","resources":[{"name":"cpu","nominalQuota":"0"},
      {"name":"google.com/tpu","nominalQuota":"8"}]})"));
  EXPECT_TRUE(MergeResourceGroups(json::parse(R"([{"coveredResources":["google.com/tpu"],
      "flavors":[{"name":"old","resources":[{"name":"google.com/tpu","nominalQuota":"4"}]}]}])"),
                                  {}, "google.com/tpu", {"old"}).empty());
}

// Forwards to the real client; after the first read of the queue, a person
// edits it, as if between our GET and our apply.
class EditAfterFirstGet : public kube::KubeClient {
 public:
  explicit EditAfterFirstGet(kube::KubeClient& inner) : inner_(inner) {}
  Result<json> Get(const kube::ResourceRef& ref, const std::string& ns, const std::string& name) override {
    auto r = inner_.Get(ref, ns, name);
    if (ref.resource == "clusterqueues" && r.ok() && !edited_) {
      edited_ = true;
      json patch = {{"spec", {{"resourceGroups", (*r)["spec"]["resourceGroups"]}}}};
      patch["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["borrowingLimit"] = "4";
      if (!inner_.MergePatch(ref, ns, name, patch).ok()) std::abort();
    }
    return r;
  }
  Result<kube::ObjectList> List(const kube::ResourceRef& r, const std::string& ns, const kube::ListOptions& o) override {
    return inner_.List(r, ns, o);
  }
  Result<json> Create(const kube::ResourceRef& r, const std::string& ns, const json& obj) override {
    return inner_.Create(r, ns, obj);
  }
  Result<json> Update(const kube::ResourceRef& r, const std::string& ns, const json& obj) override {
    return inner_.Update(r, ns, obj);
  }
  Result<json> MergePatch(const kube::ResourceRef& r, const std::string& ns, const std::string& n, const json& p,
                          const std::string& sub = "") override {
    return inner_.MergePatch(r, ns, n, p, sub);
  }
  Result<json> Apply(const kube::ResourceRef& r, const std::string& ns, const json& obj,
                     const kube::ApplyOptions& o = {}) override {
    auto a = inner_.Apply(r, ns, obj, o);
    if (r.resource == "clusterqueues" && kube::IsConflict(a.status())) ++conflicts;
    return a;
  }
  Status Delete(const kube::ResourceRef& r, const std::string& ns, const std::string& n) override {
    return inner_.Delete(r, ns, n);
  }
  Status Watch(const kube::ResourceRef& r, const std::string& ns, const kube::WatchOptions& o,
               const std::function<bool(const kube::WatchEvent&)>& f) override {
    return inner_.Watch(r, ns, o, f);
  }
  Result<std::vector<std::string>> ServedVersions(const std::string& g) override {
    return inner_.ServedVersions(g);
  }
  Result<std::vector<std::string>> ServedResources(const std::string& g, const std::string& v) override {
    return inner_.ServedResources(g, v);
  }
  int conflicts = 0;

 private:
  kube::KubeClient& inner_;
  bool edited_ = false;
};

TEST(QuotaSyncConflictTest, ConcurrentEditIsReReadNotOverwritten) {
  testing::Cluster c;
  KueueConfig cfg;
  cfg.cluster_queue = "tpu-queue";
  auto target = testing::Target({testing::Pool("train", "v5e", "2x4", 1, "ct5lp-hightpu-4t")});
  ASSERT_TRUE(QuotaSync(*c.client, cfg).Sync(target).ok());  // creates the queue
  EditAfterFirstGet racing(*c.client);
  target.pools[0].slices = 2;
  ASSERT_TRUE(QuotaSync(racing, cfg).Sync(target).ok());
  EXPECT_EQ(racing.conflicts, 1);
  auto cq = c.client->Get(kube::resources::kClusterQueues, "", "tpu-queue");
  const json& r = (*cq)["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0];
  EXPECT_EQ(r["nominalQuota"], "16");
  EXPECT_EQ(r["borrowingLimit"], "4");  // the person's edit survived
}

}  // namespace
}  // namespace tpu::kueue
