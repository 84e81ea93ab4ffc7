// Server-side apply in the emulator: managedFields, conflicts between field
// managers, force, shared ownership, and fields an applier stops declaring.
#include <gtest/gtest.h>

#include "sim/kube/api_test_util.h"
#include "sim/kube/api_server.h"

namespace tpu::kubesim {
namespace {

const std::string kCQ = "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/q";
const char* kApply = "application/apply-patch+yaml";

json Cq(json spec) {
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "ClusterQueue"},
          {"metadata", {{"name", "q"}}}, {"spec", std::move(spec)}};
}

class ApplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api_.Start().ok());
    raw_ = std::make_unique<testing::Raw>(api_.port());
  }
  testing::Answer Apply(const std::string& manager, const json& body, bool force = false) {
    return raw_->Patch(kCQ + "?fieldManager=" + manager + (force ? "&force=true" : ""), body, kApply);
  }
  KubeApiServer api_{{}};
  std::unique_ptr<testing::Raw> raw_;
};

TEST_F(ApplyTest, CreatesAndRecordsManagedFields) {
  auto r = Apply("alice", Cq({{"queueingStrategy", "StrictFIFO"}}));
  ASSERT_EQ(r.code, 201);
  const auto& mf = r.body["metadata"]["managedFields"];
  ASSERT_EQ(mf.size(), 1u);
  EXPECT_EQ(mf[0]["manager"], "alice");
  EXPECT_EQ(mf[0]["operation"], "Apply");
  EXPECT_EQ(mf[0]["fieldsType"], "FieldsV1");
  EXPECT_TRUE(mf[0]["fieldsV1"]["f:spec"].contains("f:queueingStrategy"));
}

TEST_F(ApplyTest, ConflictUnlessForcedSharedWhenEqual) {
  ASSERT_EQ(Apply("alice", Cq({{"queueingStrategy", "StrictFIFO"}})).code, 201);
  // Same value: both own it, no conflict.
  EXPECT_EQ(Apply("bob", Cq({{"queueingStrategy", "StrictFIFO"}})).code, 200);
  auto conflict = Apply("carol", Cq({{"queueingStrategy", "BestEffortFIFO"}}));
  ASSERT_EQ(conflict.code, 409);
  EXPECT_EQ(conflict.body["reason"], "Conflict");
  EXPECT_EQ(conflict.body["details"]["causes"][0]["field"], ".spec.queueingStrategy");
  EXPECT_NE(conflict.body["message"].get<std::string>().find("conflict with \"alice\""),
            std::string::npos);
  auto forced = Apply("carol", Cq({{"queueingStrategy", "BestEffortFIFO"}}), true);
  ASSERT_EQ(forced.code, 200);
  EXPECT_EQ(forced.body["spec"]["queueingStrategy"], "BestEffortFIFO");
  for (const auto& m : forced.body["metadata"]["managedFields"]) {
    EXPECT_EQ(m["manager"], "carol");  // alice and bob lost the field, and own nothing now
  }
}

TEST_F(ApplyTest, OmittedFieldsAreRemovedOnlyWhenNobodyElseOwnsThem) {
  ASSERT_EQ(Apply("alice", Cq({{"stopPolicy", "Hold"}, {"queueingStrategy", "StrictFIFO"}})).code, 201);
  ASSERT_EQ(Apply("bob", Cq({{"queueingStrategy", "StrictFIFO"}})).code, 200);
  auto r = Apply("alice", Cq(json::object()));
  ASSERT_EQ(r.code, 200);
  EXPECT_FALSE(r.body["spec"].contains("stopPolicy"));
  EXPECT_EQ(r.body["spec"]["queueingStrategy"], "StrictFIFO");  // bob still owns it
}

TEST_F(ApplyTest, UpdatesTakeOwnershipFromAppliers) {
  ASSERT_EQ(Apply("alice", Cq({{"queueingStrategy", "StrictFIFO"}})).code, 201);
  auto patched = raw_->Patch(kCQ + "?fieldManager=kubectl-edit",
                             {{"spec", {{"queueingStrategy", "BestEffortFIFO"}}}},
                             "application/merge-patch+json");
  ASSERT_EQ(patched.code, 200);
  auto conflict = Apply("alice", Cq({{"queueingStrategy", "StrictFIFO"}}));
  ASSERT_EQ(conflict.code, 409);
  EXPECT_NE(conflict.body["message"].get<std::string>().find("kubectl-edit"), std::string::npos);
}

TEST_F(ApplyTest, RequiresFieldManagerAndMatchingKind) {
  EXPECT_EQ(raw_->Patch(kCQ, Cq({}), kApply).code, 400);
  json wrong = Cq({});
  wrong["kind"] = "ResourceFlavor";
  EXPECT_EQ(Apply("alice", wrong).code, 400);
}

TEST_F(ApplyTest, ResourceVersionInTheConfigIsAPrecondition) {
  auto created = Apply("alice", Cq({{"queueingStrategy", "StrictFIFO"}}));
  json stale = Cq({{"queueingStrategy", "BestEffortFIFO"}});
  stale["metadata"]["resourceVersion"] = "1";
  EXPECT_EQ(Apply("alice", stale).code, 409);
  stale["metadata"]["resourceVersion"] = created.body["metadata"]["resourceVersion"];
  EXPECT_EQ(Apply("alice", stale).code, 200);
}

}  // namespace
}  // namespace tpu::kubesim
