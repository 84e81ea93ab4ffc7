// Server-side apply field sets: leaves, FieldsV1 round trips, keyed merges.
#include "sim/kube/field_set.h"

#include <gtest/gtest.h>

namespace tpu::kubesim {
namespace {

ListTypes Conditions() {
  ListTypes t;
  t.map_keys["status.conditions"] = {"type"};
  t.sets.insert("spec.finalizers");
  return t;
}

TEST(FieldSetTest, LeavesSkipServerMetadataAndKeyListItems) {
  json obj = json::parse(R"({"apiVersion":"v1","kind":"X",
    "metadata":{"name":"a","resourceVersion":"3","labels":{"l":"1"}},
    "spec":{"list":[1,2],"finalizers":["x"],"empty":{}},
    "status":{"conditions":[{"type":"Ready","status":"True"}]}})");
  FieldSet leaves = LeavesOf(obj, Conditions());
  FieldSet want = {
      {"f:metadata", "f:labels", "f:l"},
      {"f:spec", "f:list"},
      {"f:spec", "f:finalizers", "v:\"x\""},
      {"f:spec", "f:empty"},
      {"f:status", "f:conditions", "k:{\"type\":\"Ready\"}", "f:type"},
      {"f:status", "f:conditions", "k:{\"type\":\"Ready\"}", "f:status"},
  };
  EXPECT_EQ(leaves, want);
  EXPECT_EQ(FromFieldsV1(ToFieldsV1(leaves)), leaves);
  EXPECT_TRUE(ToFieldsV1(leaves)["f:status"]["f:conditions"]["k:{\"type\":\"Ready\"}"].contains("."));
}

TEST(FieldSetTest, MergeKeepsOtherKeyedItemsAndReplacesAtomicLists) {
  json live = json::parse(R"({"spec":{"list":[1,2],"a":1},
    "status":{"conditions":[{"type":"A","status":"True"},{"type":"B","status":"False"}]}})");
  json applied = json::parse(R"({"spec":{"list":[3]},
    "status":{"conditions":[{"type":"B","status":"True"}]}})");
  json merged = MergeApplied(live, applied, Conditions());
  EXPECT_EQ(merged["spec"]["list"], json::parse("[3]"));
  EXPECT_EQ(merged["spec"]["a"], 1);
  ASSERT_EQ(merged["status"]["conditions"].size(), 2u);
  EXPECT_EQ(merged["status"]["conditions"][1]["status"], "True");
}

TEST(FieldSetTest, RemovingTheLastNonKeyFieldRemovesTheItem) {
  json obj = json::parse(R"({"status":{"conditions":[{"type":"A","status":"True"}]}})");
  RemoveAt(obj, {"f:status", "f:conditions", "k:{\"type\":\"A\"}", "f:status"}, Conditions());
  EXPECT_TRUE(obj["status"]["conditions"].empty());
  EXPECT_EQ(PathString({"f:spec", "f:x"}), ".spec.x");
}

// As an apply that no longer sends an item removes its leaves, in path order:
// the key field first must not strand the rest (Kueue's admissionChecksStrategy
// rule: key name, set onFlavors).
TEST(FieldSetTest, AnItemsKeyFieldGoesOnlyWithTheItem) {
  ListTypes t;
  t.map_keys["spec.rules"] = {"name"};
  t.sets.insert("spec.rules[].on");
  json obj = json::parse(R"({"spec":{"rules":[{"name":"a"},{"name":"b","on":["x"]}]}})");
  const std::string b = "k:{\"name\":\"b\"}";
  RemoveAt(obj, {"f:spec", "f:rules", b, "f:name"}, t);
  EXPECT_EQ(obj["spec"]["rules"].size(), 2u) << "kept while its other fields are there";
  RemoveAt(obj, {"f:spec", "f:rules", b, "f:on", "v:\"x\""}, t);
  EXPECT_EQ(obj["spec"]["rules"], json::parse(R"([{"name":"a"}])"));
}

}  // namespace
}  // namespace tpu::kubesim
