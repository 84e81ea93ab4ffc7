// A managed instance group's instances in the cloud emulator, over HTTP:
// their names, metadata and status tied to the group's operations
// (PROVISIONING → STAGING → RUNNING), resize up and down, the group's delete,
// instances.get/delete, setMetadata's fingerprint rule, and
// listManagedInstances with the group's paging mode.
#include <regex>

#include "sim_test_util.h"

namespace tpu::sim::testing {
namespace {

const std::string kBase = "/compute/v1/projects/p1";
const std::string kZone = kBase + "/zones/us-central1-a";
const std::string kMig = kZone + "/instanceGroupManagers/mig";

class InstancesTest : public EmulatorTest {
 protected:
  void StartWithLatency(std::map<std::string, int> latency) {
    CloudEmulatorOptions o = FastOptions();
    o.op_latency_ms = std::move(latency);
    StartWith(o);
  }
  static std::string OpPath(const json& op) {
    const std::string self = op["selfLink"].get<std::string>();
    return self.substr(self.find("/compute/v1/"));
  }
  json Wait(const json& op) {
    auto r = http_->Post(OpPath(op) + "/wait");
    EXPECT_EQ(r.body["status"], "DONE") << r.raw;
    return r.body;
  }
  void MakeTemplate() {
    json t = {{"name", "tmpl"},
              {"properties", {{"machineType", "tpu7x-standard-4t"},
                              {"metadata", {{"items", json::array({{{"key", "role"}, {"value", "worker"}}})}}}}}};
    Wait(http_->Post(kBase + "/global/instanceTemplates", t).body);
  }
  json InsertMig(int size, const std::string& paging = "") {
    json mig = {{"name", "mig"}, {"instanceTemplate", "global/instanceTemplates/tmpl"}, {"targetSize", size}};
    if (!paging.empty()) mig["listManagedInstancesResults"] = paging;
    auto r = http_->Post(kZone + "/instanceGroupManagers", mig);
    EXPECT_EQ(r.status, 200) << r.raw;
    return r.body;
  }
  json List(const std::string& query = "") {
    auto r = http_->Post(kMig + "/listManagedInstances" + query);
    EXPECT_EQ(r.status, 200) << r.raw;
    return r.body.value("managedInstances", json::array());
  }
  // The group's instances and the status of `op` read before and after
  // them: when both reads agree, the list was served in that state.
  struct Sample {
    std::string before, after;
    json instances;
  };
  Sample Observe(const json& op) {
    Sample s;
    s.before = http_->Get(OpPath(op)).body.value("status", "");
    s.instances = List();
    s.after = http_->Get(OpPath(op)).body.value("status", "");
    return s;
  }
  static std::map<std::string, int> CountBy(const json& instances, const char* field) {
    std::map<std::string, int> out;
    for (const auto& m : instances) out[m.value(field, "")]++;
    return out;
  }
};

TEST_F(InstancesTest, InstancesFollowTheGroupsInsertOperation) {
  StartWithLatency({{"default", 1500}});
  MakeTemplate();
  json op = InsertMig(3);
  const std::vector<std::string> order = {"PROVISIONING", "STAGING", "RUNNING"};
  const std::map<std::string, std::string> expected = {
      {"PENDING", "PROVISIONING"}, {"RUNNING", "STAGING"}, {"DONE", "RUNNING"}};
  size_t seen = 0;  // index in `order` of the latest status seen
  ASSERT_TRUE(PollUntil([&] {
    Sample s = Observe(op);
    EXPECT_EQ(s.instances.size(), 3u) << s.instances.dump();
    for (const auto& m : s.instances) {
      const std::string status = m.value("instanceStatus", "");
      const size_t at = std::find(order.begin(), order.end(), status) - order.begin();
      EXPECT_LT(at, order.size()) << status;
      EXPECT_GE(at, seen) << "status went back to " << status;
      seen = std::max(seen, at);
      if (s.before == s.after) {
        EXPECT_EQ(status, expected.at(s.before)) << "operation " << s.before;
        EXPECT_EQ(m["currentAction"], s.before == "DONE" ? "NONE" : "CREATING");
      }
    }
    return s.before == "DONE";
  }));
  const json members = List();
  const std::regex name_re("mig-[a-z0-9]{4}");
  for (const auto& m : members) {
    EXPECT_TRUE(std::regex_match(m["name"].get<std::string>(), name_re)) << m["name"];
    EXPECT_EQ(m["instance"], "https://www.googleapis.com/compute/v1/projects/p1/zones/us-central1-a/instances/" +
                                 m["name"].get<std::string>());
    EXPECT_TRUE(m["id"].is_string());
  }
  auto got = http_->Get(kZone + "/instances/" + members[0]["name"].get<std::string>());
  ASSERT_EQ(got.status, 200) << got.raw;
  EXPECT_EQ(got.body["kind"], "compute#instance");
  EXPECT_EQ(got.body["status"], "RUNNING");
  EXPECT_EQ(got.body["id"], members[0]["id"]);
  EXPECT_TRUE(got.body["machineType"].get<std::string>().ends_with(
      "/projects/p1/zones/us-central1-a/machineTypes/tpu7x-standard-4t"));
  EXPECT_TRUE(got.body["zone"].get<std::string>().ends_with("/projects/p1/zones/us-central1-a"));
  const json md = got.body["metadata"];
  EXPECT_EQ(md["kind"], "compute#metadata");
  EXPECT_FALSE(md["fingerprint"].get<std::string>().empty());
  ASSERT_EQ(md["items"].size(), 2u);
  EXPECT_EQ(md["items"][0], json({{"key", "role"}, {"value", "worker"}}));
  EXPECT_EQ(md["items"][1]["key"], "created-by");
  EXPECT_TRUE(std::regex_match(md["items"][1]["value"].get<std::string>(),
                               std::regex("projects/[0-9]+/zones/us-central1-a/instanceGroupManagers/mig")))
      << md["items"][1]["value"];
}

TEST_F(InstancesTest, ResizeUpAndDownThenDeleteTheGroup) {
  StartWithLatency({{"default", 20}, {"compute.instanceGroupManagers.resize", 1000}, {"delete", 1000}});
  MakeTemplate();
  Wait(InsertMig(2));
  ASSERT_EQ(CountBy(List(), "currentAction")["NONE"], 2);

  json up = http_->Post(kMig + "/resize?size=4").body;
  Sample s = Observe(up);
  if (s.before == s.after && s.before != "DONE") {
    EXPECT_EQ(CountBy(s.instances, "currentAction"), (std::map<std::string, int>{{"NONE", 2}, {"CREATING", 2}}));
  }
  Wait(up);
  EXPECT_EQ(CountBy(List(), "instanceStatus"), (std::map<std::string, int>{{"RUNNING", 4}}));
  json group = http_->Get(kMig).body;
  EXPECT_EQ(group["currentActions"]["none"], 4);
  EXPECT_EQ(group["currentActions"]["creating"], 0);
  EXPECT_EQ(group["status"]["isStable"], true);

  json down = http_->Post(kMig + "/resize?size=1").body;
  s = Observe(down);
  if (s.before == s.after && s.before != "DONE") {
    EXPECT_EQ(CountBy(s.instances, "currentAction"), (std::map<std::string, int>{{"NONE", 1}, {"DELETING", 3}}));
    EXPECT_EQ(CountBy(s.instances, "instanceStatus")["STOPPING"], 3);
  }
  Wait(down);
  const json left = List();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0]["currentAction"], "NONE");
  const std::string name = left[0]["name"];

  json del = http_->Delete(kMig).body;
  s = Observe(del);
  if (s.before == s.after && s.before != "DONE") {
    EXPECT_EQ(CountBy(s.instances, "currentAction"), (std::map<std::string, int>{{"DELETING", 1}}));
  }
  Wait(del);
  EXPECT_EQ(http_->Get(kZone + "/instances/" + name).status, 404);
  EXPECT_EQ(http_->Post(kMig + "/listManagedInstances").status, 404);
}

TEST_F(InstancesTest, SetMetadataNeedsTheCurrentFingerprint) {
  MakeTemplate();
  Wait(InsertMig(1));
  const std::string path = kZone + "/instances/" + List()[0]["name"].get<std::string>();
  const std::string fp = http_->Get(path).body["metadata"]["fingerprint"];
  json items = json::array({{{"key", "bootstrap-token"}, {"value", "s3cret-value"}}});

  auto ok = http_->Post(path + "/setMetadata", {{"fingerprint", fp}, {"items", items}});
  ASSERT_EQ(ok.status, 200) << ok.raw;
  EXPECT_EQ(ok.body["kind"], "compute#operation");
  EXPECT_EQ(ok.body["operationType"], "setMetadata");
  EXPECT_TRUE(ok.body["zone"].get<std::string>().ends_with("/zones/us-central1-a"));
  EXPECT_TRUE(ok.body["targetLink"].get<std::string>().ends_with(path.substr(path.find("/projects/"))));
  // Visible with the request, under a new fingerprint.
  json md = http_->Get(path).body["metadata"];
  EXPECT_EQ(md["items"], items);
  EXPECT_NE(md["fingerprint"], fp);
  Wait(ok.body);

  for (const json& body : {json{{"fingerprint", fp}, {"items", items}}, json{{"items", items}}}) {
    auto stale = http_->Post(path + "/setMetadata", body);
    EXPECT_EQ(stale.status, 412) << stale.raw;
    EXPECT_EQ(stale.body["error"]["status"], "FAILED_PRECONDITION");
    EXPECT_EQ(stale.body["error"]["errors"][0]["reason"], "conditionNotMet");
    EXPECT_EQ(stale.body["error"]["message"], "Supplied fingerprint does not match current metadata fingerprint.");
  }
  const std::string now = md["fingerprint"];
  auto bad_key = http_->Post(path + "/setMetadata",
                             {{"fingerprint", now}, {"items", {{{"key", "no spaces"}, {"value", "s3cret-value"}}}}});
  EXPECT_EQ(bad_key.status, 400) << bad_key.raw;
  EXPECT_EQ(bad_key.raw.find("s3cret-value"), std::string::npos) << "an error must not echo a value";
  EXPECT_EQ(http_->Post(path + "/setMetadata", {{"fingerprint", now}, {"itemz", items}}).status, 400);
  EXPECT_EQ(http_->Get(path).body["metadata"]["fingerprint"], now) << "refused calls change nothing";
  EXPECT_EQ(http_->Post(kZone + "/instances/nope/setMetadata", {{"fingerprint", now}}).status, 404);
}

TEST_F(InstancesTest, DeletingOneInstance) {
  StartWithLatency({{"default", 20}, {"delete", 1000}});
  MakeTemplate();
  Wait(InsertMig(2));
  const std::string name = List()[0]["name"];
  auto del = http_->Delete(kZone + "/instances/" + name);
  ASSERT_EQ(del.status, 200) << del.raw;
  EXPECT_EQ(del.body["operationType"], "delete");
  Sample s = Observe(del.body);
  if (s.before == s.after && s.before != "DONE") {
    EXPECT_EQ(http_->Get(kZone + "/instances/" + name).body["status"], "STOPPING");
  }
  Wait(del.body);
  auto gone = http_->Get(kZone + "/instances/" + name);
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(gone.body["error"]["message"],
            "The resource 'projects/p1/zones/us-central1-a/instances/" + name + "' was not found");
  EXPECT_EQ(List().size(), 1u);
}

TEST_F(InstancesTest, ListManagedInstancesPagesOnlyWhenPaginated) {
  MakeTemplate();
  Wait(InsertMig(5, "PAGINATED"));
  std::set<std::string> names;
  std::string token;
  int pages = 0;
  do {
    auto r = http_->Post(kMig + "/listManagedInstances?maxResults=2" + (token.empty() ? "" : "&pageToken=" + token));
    ASSERT_EQ(r.status, 200) << r.raw;
    for (const auto& m : r.body["managedInstances"]) names.insert(m["name"].get<std::string>());
    token = r.body.value("nextPageToken", "");
    ++pages;
  } while (!token.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(names.size(), 5u);

  Wait(http_->Delete(kMig).body);
  Wait(InsertMig(5));  // PAGELESS, the default: maxResults is ignored
  auto all = http_->Post(kMig + "/listManagedInstances?maxResults=2");
  EXPECT_EQ(all.body["managedInstances"].size(), 5u);
  EXPECT_FALSE(all.body.contains("nextPageToken"));
}

TEST_F(InstancesTest, AFailedCreationStaysCreatingWithItsErrors) {
  MakeTemplate();
  FaultConfig faults;
  FaultRule rule;
  rule.method = "POST";
  rule.path = "instanceGroupManagers$";
  rule.rate_op_failure = 1;
  faults.rules.push_back(rule);
  ASSERT_TRUE(emu_->SetFaults(faults).ok());
  Wait(InsertMig(1));
  const json m = List().at(0);
  EXPECT_EQ(m["currentAction"], "CREATING");
  EXPECT_FALSE(m.contains("instanceStatus")) << m.dump();
  EXPECT_FALSE(m.contains("id")) << m.dump();
  EXPECT_EQ(m["lastAttempt"]["errors"]["errors"][0]["code"], "INTERNAL_ERROR") << m.dump();
  EXPECT_EQ(http_->Get(kZone + "/instances/" + m["name"].get<std::string>()).status, 404);
  // InstanceGroupManagerStatus.is_stable: not while an instance is changing.
  const json group = http_->Get(kMig).body;
  EXPECT_EQ(group["currentActions"]["creating"], 1);
  EXPECT_EQ(group["status"]["isStable"], false);
}

}  // namespace
}  // namespace tpu::sim::testing
