// The Kubernetes API emulator over HTTP: CRUD, Status bodies, discovery,
// pagination, merge patch, preconditions and finalizers.
#include "sim/kube/api_server.h"

#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include "sim/kube/api_test_util.h"

namespace tpu::kubesim {
namespace {

using testing::Raw;
using testing::Answer;

const char* kCQs = "/apis/kueue.x-k8s.io/v1beta2/clusterqueues";
const char* kCMs = "/api/v1/namespaces/default/configmaps";

json ConfigMap(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}},
          {"data", {{"k", "v"}}}};
}

class ApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(api_.Start().ok()); }
  KubeApiServer api_{{}};
  Raw raw_{0};
  Raw& raw() {
    if (!client_) client_ = std::make_unique<Raw>(api_.port());
    return *client_;
  }
  std::unique_ptr<Raw> client_;
};

TEST_F(ApiServerTest, CreateGetConflictDelete) {
  auto created = raw().Post(kCMs, ConfigMap("a"));
  ASSERT_EQ(created.code, 201);
  EXPECT_EQ(created.body["metadata"]["namespace"], "default");
  EXPECT_FALSE(created.body["metadata"]["resourceVersion"].get<std::string>().empty());
  EXPECT_FALSE(created.body["metadata"]["uid"].get<std::string>().empty());

  auto again = raw().Post(kCMs, ConfigMap("a"));
  EXPECT_EQ(again.code, 409);
  EXPECT_EQ(again.body["kind"], "Status");
  EXPECT_EQ(again.body["reason"], "AlreadyExists");
  EXPECT_EQ(again.body["message"], "configmaps \"a\" already exists");

  EXPECT_EQ(raw().Get(std::string(kCMs) + "/a").body["data"]["k"], "v");
  EXPECT_EQ(raw().Delete(std::string(kCMs) + "/a").code, 200);
  auto gone = raw().Get(std::string(kCMs) + "/a");
  EXPECT_EQ(gone.code, 404);
  EXPECT_EQ(gone.body["reason"], "NotFound");
  EXPECT_EQ(gone.body["message"], "configmaps \"a\" not found");
}

TEST_F(ApiServerTest, NamespaceMustExist) {
  auto r = raw().Post("/api/v1/namespaces/nope/configmaps", ConfigMap("a"));
  EXPECT_EQ(r.code, 404);
  EXPECT_EQ(r.body["message"], "namespaces \"nope\" not found");
}

TEST_F(ApiServerTest, ClusterScopedAndDiscovery) {
  json cq = {{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "ClusterQueue"},
             {"metadata", {{"name", "q"}}}, {"spec", {{"cohortName", "c"}}}};
  ASSERT_EQ(raw().Post(kCQs, cq).code, 201);
  EXPECT_EQ(raw().Get(std::string(kCQs) + "/q").body["spec"]["cohortName"], "c");

  auto groups = raw().Get("/apis");
  ASSERT_EQ(groups.code, 200);
  bool kueue = false;
  for (const auto& g : groups.body["groups"]) {
    if (g["name"] == "kueue.x-k8s.io") kueue = g["versions"][0]["version"] == "v1beta2";
  }
  EXPECT_TRUE(kueue);
  auto resources = raw().Get("/apis/kueue.x-k8s.io/v1beta2");
  ASSERT_EQ(resources.code, 200);
  EXPECT_EQ(resources.body["kind"], "APIResourceList");
  EXPECT_EQ(raw().Get("/apis/kueue.x-k8s.io/v1beta1").code, 404);
}

TEST_F(ApiServerTest, ListPaginatesWithContinue) {
  for (const char* n : {"a", "b", "c", "d", "e"}) ASSERT_EQ(raw().Post(kCMs, ConfigMap(n)).code, 201);
  std::vector<std::string> names;
  std::string cont;
  int pages = 0;
  do {
    auto page = raw().Get(std::string(kCMs) + "?limit=2" + (cont.empty() ? "" : "&continue=" + cont));
    ASSERT_EQ(page.code, 200);
    EXPECT_EQ(page.body["kind"], "ConfigMapList");
    for (const auto& item : page.body["items"]) names.push_back(item["metadata"]["name"]);
    cont = page.body["metadata"].value("continue", "");
    ++pages;
  } while (!cont.empty());
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
}

TEST_F(ApiServerTest, LabelSelector) {
  json a = ConfigMap("a"), b = ConfigMap("b");
  a["metadata"]["labels"] = {{"pool", "x"}};
  b["metadata"]["labels"] = {{"pool", "y"}};
  raw().Post(kCMs, a);
  raw().Post(kCMs, b);
  auto r = raw().Get(std::string(kCMs) + "?labelSelector=pool%3Dy");
  ASSERT_EQ(r.body["items"].size(), 1u);
  EXPECT_EQ(r.body["items"][0]["metadata"]["name"], "b");
  EXPECT_EQ(raw().Get(std::string(kCMs) + "?labelSelector=pool%20in%20(x,y)").body["items"].size(), 2u);
}

TEST_F(ApiServerTest, MergePatchAndResourceVersionPrecondition) {
  auto created = raw().Post(kCMs, ConfigMap("a"));
  std::string rv = created.body["metadata"]["resourceVersion"];
  auto patched = raw().Patch(std::string(kCMs) + "/a", {{"data", {{"k", nullptr}, {"n", "1"}}}},
                             "application/merge-patch+json");
  ASSERT_EQ(patched.code, 200);
  EXPECT_FALSE(patched.body["data"].contains("k"));
  EXPECT_EQ(patched.body["data"]["n"], "1");
  json stale = ConfigMap("a");
  stale["metadata"]["resourceVersion"] = rv;
  auto conflict = raw().Put(std::string(kCMs) + "/a", stale);
  EXPECT_EQ(conflict.code, 409);
  EXPECT_EQ(conflict.body["reason"], "Conflict");
  EXPECT_EQ(raw().Patch(std::string(kCMs) + "/a", {{"data", {{"n", "2"}}}}, "application/json-patch+json").code,
            415);
}

TEST_F(ApiServerTest, StatusSubresourceSeparatesWrites) {
  json cq = {{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "ClusterQueue"},
             {"metadata", {{"name", "q"}}}, {"spec", json::object()},
             {"status", {{"admittedWorkloads", 3}}}};
  auto created = raw().Post(kCQs, cq);
  EXPECT_FALSE(created.body.contains("status"));
  auto st = raw().Patch(std::string(kCQs) + "/q/status", {{"status", {{"admittedWorkloads", 2}}}},
                        "application/merge-patch+json");
  ASSERT_EQ(st.code, 200);
  EXPECT_EQ(st.body["status"]["admittedWorkloads"], 2);
  auto main = raw().Patch(std::string(kCQs) + "/q", {{"status", {{"admittedWorkloads", 9}}}},
                          "application/merge-patch+json");
  EXPECT_EQ(main.body["status"]["admittedWorkloads"], 2);
  EXPECT_EQ(main.body["metadata"]["generation"], 1);
}

TEST_F(ApiServerTest, FinalizersDelayDeletion) {
  json cm = ConfigMap("a");
  cm["metadata"]["finalizers"] = {"x/y"};
  raw().Post(kCMs, cm);
  EXPECT_EQ(raw().Delete(std::string(kCMs) + "/a").code, 202);
  auto pending = raw().Get(std::string(kCMs) + "/a");
  ASSERT_EQ(pending.code, 200);
  EXPECT_TRUE(pending.body["metadata"].contains("deletionTimestamp"));
  raw().Patch(std::string(kCMs) + "/a", {{"metadata", {{"finalizers", nullptr}}}},
              "application/merge-patch+json");
  EXPECT_EQ(raw().Get(std::string(kCMs) + "/a").code, 404);
}

TEST(ApiServerAuthTest, RejectedTokenGets401) {
  KubeApiServer::Options o;
  o.authorize = [](const std::string& h) { return h == "Bearer good"; };
  KubeApiServer api(o);
  ASSERT_TRUE(api.Start().ok());
  httplib::Client c("127.0.0.1", api.port());
  auto bad = c.Get(kCMs);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 401);
  auto good = c.Get(kCMs, {{"Authorization", "Bearer good"}});
  EXPECT_EQ(good->status, 200);
}

// What each Kueue release serves (docs/emulator.md has the sources).
TEST(ApiServerKueueReleaseTest, EachReleaseServesItsVersionsPerKind) {
  auto names = [](const Answer& a) {
    std::vector<std::string> out;
    for (const auto& r : a.body["resources"])
      if (r["name"].get<std::string>().find('/') == std::string::npos) out.push_back(r["name"]);
    std::sort(out.begin(), out.end());
    return out;
  };
  struct Case {
    std::string release, preferred;
    std::map<std::string, std::vector<std::string>> by_version;  // empty list: 404
  };
  // Every release serves AdmissionCheck and ProvisioningRequestConfig in each
  // of its versions (Cohort aside, all kinds moved together).
  const std::vector<std::string> all = {"admissionchecks", "clusterqueues", "cohorts", "localqueues",
                                        "provisioningrequestconfigs", "resourceflavors", "workloads"};
  const std::vector<std::string> no_cohorts = {"admissionchecks", "clusterqueues", "localqueues",
                                               "provisioningrequestconfigs", "resourceflavors", "workloads"};
  for (const Case& c : std::vector<Case>{
           {"v0.11", "v1beta1", {{"v1beta1", no_cohorts}, {"v1alpha1", {"cohorts"}}, {"v1beta2", {}}}},
           {"v0.13", "v1beta1", {{"v1beta1", all}, {"v1alpha1", {}}, {"v1beta2", {}}}},
           {"v0.15", "v1beta2", {{"v1beta2", all}, {"v1beta1", all}, {"v1alpha1", {}}}},
           {"v0.17", "v1beta2", {{"v1beta2", all}, {"v1beta1", {}}}},
       }) {
    KubeApiServer::Options o;
    o.kueue_release = c.release;
    KubeApiServer api(o);
    ASSERT_TRUE(api.Start().ok());
    Raw raw(api.port());
    auto groups = raw.Get("/apis");
    std::string preferred;
    for (const auto& g : groups.body["groups"])
      if (g["name"] == "kueue.x-k8s.io") preferred = g["preferredVersion"]["version"];
    EXPECT_EQ(preferred, c.preferred) << c.release;
    for (const auto& [version, want] : c.by_version) {
      auto a = raw.Get("/apis/kueue.x-k8s.io/" + version);
      if (want.empty()) {
        EXPECT_EQ(a.code, 404) << c.release << " " << version;
      } else {
        ASSERT_EQ(a.code, 200) << c.release << " " << version;
        EXPECT_EQ(names(a), want) << c.release << " " << version;
      }
    }
  }
  // The cluster autoscaler's ProvisioningRequest, beside any Kueue.
  {
    KubeApiServer api(KubeApiServer::Options{});
    ASSERT_TRUE(api.Start().ok());
    auto a = Raw(api.port()).Get("/apis/autoscaling.x-k8s.io/v1");
    ASSERT_EQ(a.code, 200);
    EXPECT_EQ(names(a), std::vector<std::string>{"provisioningrequests"});
  }
  // Not a release this emulator knows: no Kueue at all.
  KubeApiServer::Options o;
  o.kueue_release = "v0.8";
  KubeApiServer old(o);
  ASSERT_TRUE(old.Start().ok());
  EXPECT_EQ(Raw(old.port()).Get("/apis/kueue.x-k8s.io/v1beta1").code, 404);
}

}  // namespace
}  // namespace tpu::kubesim
