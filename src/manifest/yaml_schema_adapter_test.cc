// The YAML tree adapter shows valijson what the JSON copy of the tree showed:
// each document is validated both ways against the real schemas and must give
// the same verdict and the same errors (path and text) in the same order.
#include "manifest/yaml_schema_adapter.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "manifest/schema_check.h"

namespace tpu::manifest {
namespace {

struct Outcome {
  bool valid = false;
  std::vector<std::string> errors;  // "<root>.[spec].[x]: description"
};

template <typename Adapter>
Outcome Validate(const valijson::Schema& schema, const Adapter& adapter) {
  valijson::Validator validator;
  valijson::ValidationResults results;
  Outcome out;
  out.valid = validator.validate(schema, adapter, &results);
  valijson::ValidationResults::Error e;
  while (results.popError(e)) {
    std::string path;
    for (const auto& c : e.context) path += (path.empty() ? "" : ".") + c;
    out.errors.push_back(path + ": " + e.description);
  }
  return out;
}

// Validates every document of `yaml` against the schema of `file` both ways.
void ExpectSameAsJsonCopy(const char* file, const std::string& yaml, bool want_valid) {
  nlohmann::json source;
  for (const auto& s : EmbeddedSchemas())
    if (std::string(s.file) == file) source = nlohmann::json::parse(s.json);
  ASSERT_FALSE(source.is_null()) << file;
  valijson::Schema schema;
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  valijson::adapters::NlohmannJsonAdapter schema_adapter(source);
  parser.populateSchema(schema_adapter, schema);

  YamlFile parsed = ParseYaml(yaml);
  ASSERT_FALSE(parsed.documents.empty());
  for (const auto& doc : parsed.documents) {
    const nlohmann::json copy = YamlToJson(doc, doc.root());
    const Outcome want = Validate(schema, valijson::adapters::NlohmannJsonAdapter(copy));
    const YamlSchemaView view(doc);
    const Outcome got = Validate(schema, valijson::adapters::YamlTreeAdapter({&view, &doc.root()}));
    EXPECT_EQ(got.valid, want.valid) << yaml;
    EXPECT_EQ(got.errors, want.errors) << yaml;
    EXPECT_EQ(got.valid, want_valid) << yaml;
  }
}

constexpr const char* kPool = "tpunodepool_v1alpha1.json";
constexpr const char* kGroup = "tpunodegroup_v1alpha1.json";
constexpr const char* kCluster = "cluster_v1alpha1.json";

const char* const kValidPool = R"(apiVersion: tpu-provisioner.io/v1alpha1
kind: TPUNodePool
metadata:
  name: v5p-res-0
spec:
  accelerator: v5p
  topology: 2x2x4
  capacity:
    type: reservation
    reservation: res-v5p-res-0
  nodeConfig:
    labels:
      team: team-6
      bench-edit: "v0"
    taints:
      - key: workload
        value: training
        effect: NoSchedule
    resourceLabels:
      cost-center: cc-9
  management:
    autoUpgrade: true
)";

TEST(YamlSchemaAdapterTest, ValidPoolIsValid) { ExpectSameAsJsonCopy(kPool, kValidPool, true); }

TEST(YamlSchemaAdapterTest, UnknownFieldsAreNamedInKeyOrder) {
  // Written zeta before alpha: valijson names the first member it meets,
  // which for the JSON copy was the first in key order.
  ExpectSameAsJsonCopy(kPool, std::string(kValidPool) + "  zeta: 1\n  alpha: 2\nzz: 3\naa: 4\n", false);
}

TEST(YamlSchemaAdapterTest, WrongTypesEnumsAndPatterns) {
  ExpectSameAsJsonCopy(kPool, R"(apiVersion: tpu-provisioner.io/v1alpha1
kind: TPUNodePool
metadata:
  name: Not_A_Name
spec:
  accelerator: v99
  topology: [2, 2]
  nodeCount: "3"
  capacity:
    type: sopt
  nodeConfig:
    labels: [a, b]
    taints:
      - key: workload
        effect: Sometimes
      - 7
      - {}
  management:
    autoUpgrade: "yes"
    autoRepair: 1.5
)",
                       false);
}

TEST(YamlSchemaAdapterTest, MissingRequiredFieldsAndEmptyContainers) {
  ExpectSameAsJsonCopy(kPool, "apiVersion: tpu-provisioner.io/v1alpha1\nkind: TPUNodePool\nmetadata: {}\nspec: {}\n",
                       false);
  ExpectSameAsJsonCopy(kPool, "kind: TPUNodePool\nmetadata:\nspec: []\n", false);
  ExpectSameAsJsonCopy(kPool, "[]\n", false);
  ExpectSameAsJsonCopy(kPool, "just a string\n", false);
}

TEST(YamlSchemaAdapterTest, NumbersNullsAndAliases) {
  ExpectSameAsJsonCopy(kPool, R"(apiVersion: tpu-provisioner.io/v1alpha1
kind: TPUNodePool
metadata:
  name: &n pool-a
  labels: ~
spec:
  accelerator: v5e
  topology: 2x4
  nodeCount: 2.0
  capacity: &cap
    type: spot
  maxNodes: -1
  nodeConfig:
    labels:
      copy: *n
      flag: true
      n: 12
      x: 1e3
)",
                       false);
}

TEST(YamlSchemaAdapterTest, GroupsAndClusters) {
  ExpectSameAsJsonCopy(kGroup, R"(apiVersion: tpu-provisioner.io/v1alpha1
kind: TPUNodeGroup
metadata:
  name: g
spec:
  accelerator: v5p
  topology: 2x2x2
  replicas: "two"
  extra: {b: 1, a: 2}
)",
                       false);
  ExpectSameAsJsonCopy(kCluster, R"(apiVersion: tpu-provisioner.io/v1alpha1
kind: Cluster
metadata:
  name: cluster-000
spec:
  location: 7
  prune: "no"
  maxDeletePercent: 400
  suspend: null
)",
                       false);
}

// SchemaChecker over the adapter: the errors, positions and their order that
// the check over a JSON copy gave (taken from the build before the adapter).
TEST(YamlSchemaAdapterTest, CheckerErrorsKeepTheirPositionsAndOrder) {
  YamlFile parsed = ParseYaml(R"(apiVersion: tpu-provisioner.io/v1alpha1
kind: TPUNodePool
metadata:
  name: v5p-res-0
  zeta: 1
  alpha: 2
spec:
  accelerator: v5p
  topology: [2, 2]
  nodeCount: "3"
  capacity:
    type: sopt
  nodeConfig:
    taints:
      - key: workload
        effect: Sometimes
      - 7
      - {}
  management:
    autoRepair: 1.5
  zz: 1
  bb: 2
)");
  ASSERT_EQ(parsed.documents.size(), 1u);
  SchemaChecker checker;
  std::vector<DocError> errors;
  std::set<std::string> bad;
  checker.Check(Kind::kTPUNodePool, parsed.documents[0], &errors, &bad);
  std::vector<std::string> got;
  for (const auto& e : errors)
    got.push_back(std::to_string(e.line) + ":" + std::to_string(e.column) + ": " + e.field + ": " + e.message);
  std::sort(got.begin(), got.end());  // the loader sorts a file's errors by position
  const std::string spec_fields =
      "accelerator, autoscaling, capacity, cluster, location, machineType, management, nodeConfig, nodeCount, "
      "project, slices, topology, version, workloadPolicy";
  EXPECT_EQ(got, (std::vector<std::string>{
                     "10:3: spec.nodeCount: expected an integer, got string \"3\"",
                     "12:5: spec.capacity.type: expected one of onDemand, spot, reservation, flexStart; got string \"sopt\"",
                     "16:9: spec.nodeConfig.taints[0].effect: expected one of NoSchedule, PreferNoSchedule, NoExecute; "
                     "got string \"Sometimes\"",
                     "17:9: spec.nodeConfig.taints[1]: expected a map, got integer 7",
                     "18:9: spec.nodeConfig.taints[2].effect: required field is missing",
                     "18:9: spec.nodeConfig.taints[2].key: required field is missing",
                     "20:5: spec.management.autoRepair: expected a boolean, got number 1.5",
                     "22:3: spec.bb: unknown field (expected one of: " + spec_fields + ")",
                     "6:3: metadata.alpha: unknown field (expected one of: annotations, labels, name, namespace)",
                     "9:3: spec.topology: expected a string, got a list",
                 }));
  EXPECT_EQ(bad.count("metadata.alpha"), 1u);
  EXPECT_EQ(bad.count("spec.bb"), 1u);
}

// A map's members in key order, a repeated key once with its last value, as in a JSON object.
TEST(YamlSchemaAdapterTest, ViewOrdersMembersAndKeepsTheLastOfARepeatedKey) {
  YamlDocument doc;
  auto scalar = [&](const std::string& text, YamlNode::Type type) {
    YamlNode n;
    n.type = type;
    n.text = text;
    if (type == YamlNode::Type::kInt) n.integer = std::stoll(text);
    doc.nodes.push_back(n);
    return static_cast<uint32_t>(doc.nodes.size() - 1);
  };
  std::vector<uint32_t> kids = {scalar("b", YamlNode::Type::kString), scalar("1", YamlNode::Type::kInt),
                                scalar("a", YamlNode::Type::kString), scalar("2", YamlNode::Type::kInt),
                                scalar("b", YamlNode::Type::kString), scalar("3", YamlNode::Type::kInt)};
  YamlNode map;
  map.type = YamlNode::Type::kMap;
  map.first = 0;
  map.count = static_cast<uint32_t>(kids.size());
  doc.kids = kids;
  doc.nodes.push_back(map);
  doc.root_index = static_cast<uint32_t>(doc.nodes.size() - 1);

  const YamlSchemaView view(doc);
  valijson::adapters::YamlTreeAdapter adapter({&view, &doc.root()});
  ASSERT_TRUE(adapter.isObject());
  std::vector<std::string> seen;
  for (const auto& m : adapter.asObject()) seen.push_back(m.first + "=" + std::to_string(m.second.asInteger()));
  EXPECT_EQ(seen, (std::vector<std::string>{"a=2", "b=3"}));
  EXPECT_EQ(YamlToJson(doc, doc.root()).dump(), R"({"a":2,"b":3})");
  auto it = adapter.asObject().find("b");
  ASSERT_TRUE(it != adapter.asObject().end());
  EXPECT_EQ((*it).second.asInteger(), 3);
  EXPECT_TRUE(adapter.asObject().find("c") == adapter.asObject().end());
  EXPECT_TRUE(valijson::adapters::YamlTreeAdapter().isObject());
  EXPECT_EQ(valijson::adapters::YamlTreeAdapter().asObject().size(), 0u);
}

}  // namespace
}  // namespace tpu::manifest
