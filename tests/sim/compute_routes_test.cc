// Compute routes of the cloud emulator over HTTP: workload policies, instance
// templates, managed instance groups (insert/get/delete/resize), lists and
// aggregated lists with paging, and zone/region/global operations with wait;
// a MIG's workload policy and bulk mode's provisioning models.
#include "sim_test_util.h"

namespace tpu::sim::testing {
namespace {

const std::string kBase = "/compute/v1/projects/p1";

class ComputeTest : public EmulatorTest {
 protected:
  // Waits through POST …/wait and checks the operation ended well.
  json Wait(const json& op) {
    std::string self = op["selfLink"].get<std::string>();
    std::string path = self.substr(self.find("/compute/v1/"));
    auto r = http_->Post(path + "/wait");
    EXPECT_EQ(r.status, 200) << r.raw;
    EXPECT_EQ(r.body["status"], "DONE") << r.raw;
    return r.body;
  }
  json Insert(const std::string& collection_path, const json& body) {
    auto r = http_->Post(kBase + collection_path, body);
    EXPECT_EQ(r.status, 200) << r.raw;
    EXPECT_EQ(r.body["kind"], "compute#operation");
    EXPECT_EQ(r.body["operationType"], "insert");
    return Wait(r.body);
  }
  void MakeTemplate(const std::string& name, const std::string& model = "RESERVATION_BOUND") {
    Insert("/global/instanceTemplates",
           {{"name", name},
            {"properties", {{"machineType", "tpu7x-standard-4t"},
                            {"scheduling", {{"provisioningModel", model}}}}}});
  }
  static void ExpectInvalid(const HttpResult& r, const std::string& message) {
    EXPECT_EQ(r.status, 400) << r.raw;
    EXPECT_EQ(r.body["error"]["status"], "INVALID_ARGUMENT") << r.raw;
    EXPECT_EQ(r.body["error"]["message"], message) << r.raw;
  }
};

TEST_F(ComputeTest, ResourcePolicyInsertGetListDelete) {
  json wp = {{"name", "wp"}, {"workloadPolicy", {{"type", "HIGH_THROUGHPUT"}, {"acceleratorTopology", "4x4x4"}}}};
  auto op = Insert("/regions/us-central1/resourcePolicies", wp);
  EXPECT_EQ(op["targetLink"],
            "https://www.googleapis.com/compute/v1/projects/p1/regions/us-central1/resourcePolicies/wp");
  EXPECT_EQ(op["progress"], 100);
  EXPECT_TRUE(op["region"].get<std::string>().ends_with("/regions/us-central1"));
  auto got = http_->Get(kBase + "/regions/us-central1/resourcePolicies/wp");
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(got.body["kind"], "compute#resourcePolicy");
  EXPECT_EQ(got.body["status"], "READY");
  EXPECT_EQ(got.body["workloadPolicy"]["acceleratorTopology"], "4x4x4");
  auto dup = http_->Post(kBase + "/regions/us-central1/resourcePolicies", wp);
  EXPECT_EQ(dup.status, 409);
  EXPECT_EQ(dup.body["error"]["message"],
            "The resource 'projects/p1/regions/us-central1/resourcePolicies/wp' already exists");
  auto list = http_->Get(kBase + "/regions/us-central1/resourcePolicies");
  EXPECT_EQ(list.body["kind"], "compute#resourcePolicyList");
  EXPECT_EQ(list.body["items"].size(), 1u);
  auto del = http_->Delete(kBase + "/regions/us-central1/resourcePolicies/wp");
  ASSERT_EQ(del.status, 200);
  EXPECT_EQ(del.body["operationType"], "delete");
  Wait(del.body);
  auto gone = http_->Get(kBase + "/regions/us-central1/resourcePolicies/wp");
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(gone.body["error"]["message"],
            "The resource 'projects/p1/regions/us-central1/resourcePolicies/wp' was not found");
  EXPECT_EQ(gone.body["error"]["errors"][0]["reason"], "notFound");
}

TEST_F(ComputeTest, InstanceGroupManagerLifecycleAndResize) {
  MakeTemplate("tmpl");
  json mig = {{"name", "mig"}, {"instanceTemplate", "global/instanceTemplates/tmpl"},
              {"targetSize", 4}, {"targetSizePolicy", {{"mode", "BULK"}}}};
  auto r = http_->Post(kBase + "/zones/us-central1-a/instanceGroupManagers", mig);
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_TRUE(r.body["zone"].get<std::string>().ends_with("/zones/us-central1-a"));
  // The operation can be polled by GET too.
  std::string self = r.body["selfLink"];
  auto polled = http_->Get(self.substr(self.find("/compute/v1/")));
  EXPECT_EQ(polled.status, 200);
  Wait(r.body);
  auto got = http_->Get(kBase + "/zones/us-central1-a/instanceGroupManagers/mig").body;
  EXPECT_EQ(got["kind"], "compute#instanceGroupManager");
  EXPECT_EQ(got["targetSize"], 4);
  EXPECT_EQ(got["targetSizePolicy"]["mode"], "BULK");
  EXPECT_EQ(got["status"]["isStable"], true);
  EXPECT_EQ(got["instanceTemplate"],
            "https://www.googleapis.com/compute/v1/projects/p1/global/instanceTemplates/tmpl");

  auto resize = http_->Post(kBase + "/zones/us-central1-a/instanceGroupManagers/mig/resize?size=8");
  ASSERT_EQ(resize.status, 200) << resize.raw;
  EXPECT_EQ(resize.body["operationType"], "compute.instanceGroupManagers.resize");
  Wait(resize.body);
  EXPECT_EQ(http_->Get(kBase + "/zones/us-central1-a/instanceGroupManagers/mig").body["targetSize"], 8);
  EXPECT_EQ(http_->Post(kBase + "/zones/us-central1-a/instanceGroupManagers/mig/resize?size=-1").status, 400);

  // A template in use cannot be deleted.
  auto busy = http_->Delete(kBase + "/global/instanceTemplates/tmpl");
  EXPECT_EQ(busy.status, 400);
  EXPECT_EQ(busy.body["error"]["errors"][0]["reason"], "resourceInUseByAnotherResource");
  Wait(http_->Delete(kBase + "/zones/us-central1-a/instanceGroupManagers/mig").body);
  Wait(http_->Delete(kBase + "/global/instanceTemplates/tmpl").body);
  EXPECT_EQ(http_->Get(kBase + "/global/instanceTemplates/tmpl").status, 404);

  mig["instanceTemplate"] = "global/instanceTemplates/none";
  EXPECT_EQ(http_->Post(kBase + "/zones/us-central1-a/instanceGroupManagers", mig).status, 400);
}

TEST_F(ComputeTest, AggregatedListsPageAcrossScopes) {
  MakeTemplate("tmpl");
  for (const char* zone : {"us-central1-a", "us-east5-b", "europe-west4-a"}) {
    for (int i = 0; i < 2; ++i) {
      Insert(std::string("/zones/") + zone + "/instanceGroupManagers",
             {{"name", "mig-" + std::to_string(i)}, {"instanceTemplate", "global/instanceTemplates/tmpl"},
              {"targetSize", 1}});
    }
  }
  auto all = http_->Get(kBase + "/aggregated/instanceGroupManagers");
  ASSERT_EQ(all.status, 200);
  EXPECT_EQ(all.body["kind"], "compute#instanceGroupManagerAggregatedList");
  EXPECT_EQ(all.body["items"]["zones/us-east5-b"]["instanceGroupManagers"].size(), 2u);
  EXPECT_FALSE(all.body.contains("nextPageToken"));

  std::set<std::string> names;
  std::string token;
  int pages = 0;
  do {
    auto page = http_->Get(kBase + "/aggregated/instanceGroupManagers?maxResults=4" +
                           (token.empty() ? "" : "&pageToken=" + token));
    ASSERT_EQ(page.status, 200) << page.raw;
    for (const auto& [scope, list] : page.body["items"].items())
      for (const auto& m : list["instanceGroupManagers"]) names.insert(scope + "/" + m["name"].get<std::string>());
    token = page.body.value("nextPageToken", "");
    ++pages;
  } while (!token.empty());
  EXPECT_EQ(pages, 2);
  EXPECT_EQ(names.size(), 6u);

  auto tmpl = http_->Get(kBase + "/aggregated/instanceTemplates");
  EXPECT_EQ(tmpl.body["items"]["global"]["instanceTemplates"].size(), 1u);
  EXPECT_EQ(http_->Get(kBase + "/aggregated/resourcePolicies").body["items"], json::object());
  auto ops = http_->Get(kBase + "/aggregated/operations?maxResults=3");
  EXPECT_EQ(ops.body["kind"], "compute#operationAggregatedList");
  EXPECT_TRUE(ops.body.contains("nextPageToken"));
  auto zonal = http_->Get(kBase + "/zones/us-central1-a/instanceGroupManagers?maxResults=1");
  EXPECT_EQ(zonal.body["items"].size(), 1u);
  EXPECT_TRUE(zonal.body.contains("nextPageToken"));
  EXPECT_EQ(http_->Get(kBase + "/aggregated/instanceGroupManagers?pageToken=garbage").status, 400);
}

TEST_F(ComputeTest, OperationsByScopeAndWait) {
  CloudEmulatorOptions o = FastOptions();
  o.op_latency_ms = {{"default", 300}};
  StartWith(o);
  auto r = http_->Post(kBase + "/global/instanceTemplates",
                       {{"name", "t"}, {"properties", {{"machineType", "n2-standard-8"}}}});
  ASSERT_EQ(r.status, 200);
  auto get = http_->Get(kBase + "/global/operations/" + r.body["name"].get<std::string>());
  EXPECT_EQ(get.status, 200);
  EXPECT_NE(get.body["status"], "DONE");
  auto waited = http_->Post(kBase + "/global/operations/" + r.body["name"].get<std::string>() + "/wait");
  EXPECT_EQ(waited.body["status"], "DONE");
  EXPECT_EQ(http_->Get(kBase + "/zones/us-central1-a/operations/operation-0-0").status, 404);
  EXPECT_EQ(http_->Post(kBase + "/regions/us-central1/operations/operation-0-0/wait").status, 404);
}

// `filter`: one `FIELD = VALUE` / `FIELD != VALUE` comparison, before paging;
// anything else is refused rather than ignored.
TEST_F(ComputeTest, ListsFilterOnOneFieldComparison) {
  CloudEmulatorOptions o = FastOptions();
  o.op_latency_ms = {{"default", 600'000}, {"insert", 0}};
  StartWith(o);
  auto quick = http_->Post(kBase + "/global/instanceTemplates",
                           {{"name", "quick"}, {"properties", {{"machineType", "n2-standard-8"}}}});
  ASSERT_EQ(quick.status, 200);
  auto del = http_->Delete(kBase + "/global/instanceTemplates/quick");
  ASSERT_EQ(del.status, 200) << del.raw;  // its operation runs for ten minutes
  auto running = http_->Get(kBase + "/aggregated/operations?filter=status%20!%3D%20DONE");
  ASSERT_EQ(running.status, 200) << running.raw;
  ASSERT_EQ(running.body["items"]["global"]["operations"].size(), 1u);
  EXPECT_EQ(running.body["items"]["global"]["operations"][0]["operationType"], "delete");
  auto done = http_->Get(kBase + "/global/operations?filter=%28status%20%3D%20%22DONE%22%29");
  ASSERT_EQ(done.status, 200) << done.raw;
  ASSERT_EQ(done.body["items"].size(), 1u);
  EXPECT_EQ(done.body["items"][0]["operationType"], "insert");
  auto all = http_->Get(kBase + "/global/operations");
  EXPECT_EQ(all.body["items"].size(), 2u);
  auto other = http_->Get(kBase + "/global/operations?filter=progress%20%3E%2010");
  EXPECT_EQ(other.status, 400);
  EXPECT_NE(other.raw.find("FIELD != VALUE"), std::string::npos) << other.raw;
}

// Google's Compute client sends an empty query string ("…/resourcePolicies?").
TEST_F(ComputeTest, EmptyQueryStringIsServed) {
  auto r = http_->Post(kBase + "/global/instanceTemplates?",
                       {{"name", "t"}, {"properties", {{"machineType", "n2-standard-8"}}}});
  EXPECT_EQ(r.status, 200) << r.raw << " curl=" << r.curl;
}

TEST_F(ComputeTest, UnknownFieldsAndBadEnumsAreRejected) {
  auto r = http_->Post(kBase + "/regions/us-central1/resourcePolicies",
                       {{"name", "wp"}, {"workloadPolicy", {{"type", "HIGH_THROUGHPUT"}, {"topology", "2x2x2"}}}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["error"]["message"],
            "Invalid JSON payload received. Unknown name \"topology\" at "
            "'resource_policy_resource.workload_policy': Cannot find field.");
  r = http_->Post(kBase + "/regions/us-central1/resourcePolicies",
                  {{"name", "wp"}, {"workloadPolicy", {{"type", "FAST"}}}});
  EXPECT_EQ(r.status, 400);
  MakeTemplate("tmpl");
  r = http_->Post(kBase + "/zones/us-central1-a/instanceGroupManagers",
                  {{"name", "m"}, {"instanceTemplate", "global/instanceTemplates/tmpl"},
                   {"targetSizePolicy", {{"mode", "ALL_AT_ONCE"}}}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(http_->Post(kBase + "/global/instanceTemplates", {{"name", "Bad_Name"}, {"properties", {{"machineType", "x"}}}}).status, 400);
}

// The workload policy belongs on the MIG (InstanceGroupManagerResourcePolicies
// in compute.proto); a template names instance policies, never by URL.
TEST_F(ComputeTest, TheWorkloadPolicyGoesOnTheGroupNotTheTemplate) {
  Insert("/regions/us-central1/resourcePolicies",
         {{"name", "wp"}, {"workloadPolicy", {{"type", "HIGH_THROUGHPUT"}, {"acceleratorTopology", "2x2x2"},
                                              {"acceleratorTopologyMode", "AUTO_CONNECT"}}}});
  EXPECT_EQ(http_->Get(kBase + "/regions/us-central1/resourcePolicies/wp").body["workloadPolicy"]["acceleratorTopologyMode"],
            "AUTO_CONNECT");
  auto url_in_template = http_->Post(
      kBase + "/global/instanceTemplates",
      {{"name", "t-url"},
       {"properties", {{"machineType", "tpu7x-standard-4t"},
                       {"resourcePolicies", {"projects/p1/regions/us-central1/resourcePolicies/wp"}}}}});
  ExpectInvalid(url_in_template,
                "Invalid value for field 'resource.properties.resourcePolicies[0]': "
                "'projects/p1/regions/us-central1/resourcePolicies/wp'. Instance templates name resource "
                "policies, not their URLs.");
  MakeTemplate("tmpl");
  json mig = {{"name", "mig"}, {"instanceTemplate", "global/instanceTemplates/tmpl"}, {"targetSize", 2},
              {"targetSizePolicy", {{"mode", "BULK"}}},
              {"resourcePolicies", {{"workloadPolicy", "projects/p1/regions/us-central1/resourcePolicies/wp"}}}};
  Insert("/zones/us-central1-a/instanceGroupManagers", mig);
  EXPECT_EQ(http_->Get(kBase + "/zones/us-central1-a/instanceGroupManagers/mig").body["resourcePolicies"],
            json({{"workloadPolicy", "projects/p1/regions/us-central1/resourcePolicies/wp"}}));
  mig["name"] = "mig2";
  mig["resourcePolicies"]["workloadPolicy"] = "projects/p1/regions/us-central1/resourcePolicies/none";
  ExpectInvalid(http_->Post(kBase + "/zones/us-central1-a/instanceGroupManagers", mig),
                "Invalid value for field 'resource.resourcePolicies.workloadPolicy': "
                "'projects/p1/regions/us-central1/resourcePolicies/none'. The referenced workload policy "
                "does not exist.");
  auto mode = http_->Post(kBase + "/regions/us-central1/resourcePolicies",
                          {{"name", "wp2"}, {"workloadPolicy", {{"type", "HIGH_THROUGHPUT"},
                                                                {"acceleratorTopologyMode", "STATIC"}}}});
  EXPECT_EQ(mode.status, 400) << "acceleratorTopologyMode is AUTO_CONNECT or PROVISION_ONLY";
}

// "Bulk mode in MIGs is only supported with instance templates that specify
// either a reservation-bound or flex-start provisioning model."
TEST_F(ComputeTest, BulkModeTakesReservationBoundOrFlexStartTemplatesOnly) {
  for (const char* model : {"SPOT", "STANDARD"}) {
    const std::string name = std::string("t-") + (model[1] == 'P' ? "spot" : "standard");
    MakeTemplate(name, model);
    json mig = {{"name", "m-" + name}, {"instanceTemplate", "global/instanceTemplates/" + name},
                {"targetSize", 2}, {"targetSizePolicy", {{"mode", "BULK"}}}};
    ExpectInvalid(http_->Post(kBase + "/zones/us-central1-a/instanceGroupManagers", mig),
                  std::string("Invalid value for field 'resource.targetSizePolicy.mode': 'BULK'. Bulk "
                              "mode requires an instance template with provisioning model "
                              "RESERVATION_BOUND or FLEX_START, got ") + model + ".");
    mig["targetSizePolicy"]["mode"] = "INDIVIDUAL";
    Insert("/zones/us-central1-a/instanceGroupManagers", mig);
  }
  MakeTemplate("t-flex", "FLEX_START");
  Insert("/zones/us-central1-a/instanceGroupManagers",
         {{"name", "m-flex"}, {"instanceTemplate", "global/instanceTemplates/t-flex"}, {"targetSize", 2},
          {"targetSizePolicy", {{"mode", "BULK"}}}});
}

}  // namespace
}  // namespace tpu::sim::testing
