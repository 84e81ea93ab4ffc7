// ParseManifestFile: YAML → per-document kind dispatch → schema → typed value.
#include <algorithm>

#include "manifest/decode_util.h"
#include "manifest/parsed_file.h"

namespace tpu::manifest {
namespace {

constexpr size_t kMaxErrorsPerFile = 200;

struct KindInfo {
  const char* kind;
  const char* api_version;
  Kind value;
};
constexpr KindInfo kKinds[] = {
    {"TPUNodePool", "tpu-provisioner.io/v1alpha1", Kind::kTPUNodePool},
    {"TPUNodeGroup", "tpu.google.com/v1alpha1", Kind::kTPUNodeGroup},
    {"Cluster", "tpu-provisioner.io/v1alpha1", Kind::kCluster},
};

std::optional<DirField> ReadDirField(const YamlDocument& d, const YamlNode* map, const char* key,
                                     const std::string& field) {
  const YamlNode* v = map ? d.Find(*map, key) : nullptr;
  if (!v || v->type != YamlNode::Type::kString) return std::nullopt;
  return DirField{v->text, field, v->line, v->column};
}

// The document's kind and apiVersion; null (with the error in `out`) when it
// is not a manifest of a kind we know.
const KindInfo* CheckHeader(const YamlDocument& d, ParsedFile* out) {
  const YamlNode& root = d.root();
  auto fail = [&](const YamlNode& at, std::string field, std::string message) {
    out->errors.push_back({at.line, at.column, std::move(field), std::move(message)});
  };
  if (root.type != YamlNode::Type::kMap) {
    fail(root, "", "expected a manifest (a map with apiVersion, kind, metadata and spec), got a " +
                       std::string(root.type == YamlNode::Type::kSeq ? "list" : "scalar"));
    return nullptr;
  }
  const YamlNode* kind = d.Find(root, "kind");
  const YamlNode* api = d.Find(root, "apiVersion");
  const std::string expected_kinds = "TPUNodePool, TPUNodeGroup or Cluster";
  if (!kind) {
    fail(root, "kind", "required field is missing (expected " + expected_kinds + ")");
    return nullptr;
  }
  const KindInfo* info = nullptr;
  for (const auto& k : kKinds)
    if (kind->type == YamlNode::Type::kString && kind->text == k.kind) info = &k;
  if (!info) {
    fail(*kind, "kind", "unknown kind \"" + kind->text + "\" (expected " + expected_kinds + ")");
    return nullptr;
  }
  if (!api) {
    fail(*d.FindKey(root, "kind"), "apiVersion",
         std::string("required field is missing (expected ") + info->api_version + " for kind " + info->kind + ")");
  } else if (api->type != YamlNode::Type::kString || api->text != info->api_version) {
    fail(*api, "apiVersion", "unknown apiVersion \"" + api->text + "\" for kind " + info->kind + " (expected " +
                                 info->api_version + ")");
  }
  return info;
}

// The typed object of `doc.kind` from its spec (and metadata).
void DecodeBody(const YamlDocument& d, DocReader& reader, const YamlNode* metadata, const YamlNode* spec,
                ParsedDoc& doc) {
  switch (doc.kind) {
    case Kind::kTPUNodePool: {
      TPUNodePool pool;
      pool.name = doc.name;
      pool.where = {"", doc.line, doc.column};
      pool.annotations = ReadAnnotations(reader, metadata);
      doc.cluster = ReadDirField(d, spec, "cluster", "spec.cluster");
      DecodePool(reader, &pool);
      doc.value = std::move(pool);
      break;
    }
    case Kind::kTPUNodeGroup: {
      TPUNodeGroup group;
      group.name = doc.name;
      group.where = {"", doc.line, doc.column};
      group.annotations = ReadAnnotations(reader, metadata);
      DecodeGroup(reader, &group);
      doc.value = std::move(group);
      break;
    }
    case Kind::kCluster: {
      ClusterPolicy policy;
      policy.declared = true;
      policy.where = {"", doc.line, doc.column};
      doc.cluster = ReadDirField(d, metadata, "name", "metadata.name");
      DecodeCluster(reader, &policy);
      doc.value = std::move(policy);
      break;
    }
  }
}

void DecodeDocument(const YamlDocument& d, SchemaChecker& checker, ParsedFile* out) {
  const YamlNode& root = d.root();
  size_t first_error = out->errors.size();
  const KindInfo* info = CheckHeader(d, out);
  if (!info) return;

  std::set<std::string> bad;
  std::vector<DocError> schema_errors;
  checker.Check(info->value, d, &schema_errors, &bad);
  for (auto& e : schema_errors)
    if (e.field != "apiVersion" && e.field != "kind") out->errors.push_back(std::move(e));

  ParsedDoc doc;
  doc.kind = info->value;
  const YamlNode* kind_key = d.FindKey(root, "kind");
  doc.line = kind_key->line;
  doc.column = kind_key->column;
  const YamlNode* metadata = d.Find(root, "metadata");
  if (const YamlNode* name = metadata ? d.Find(*metadata, "name") : nullptr;
      name && name->type == YamlNode::Type::kString) {
    doc.name = name->text;
    doc.name_line = name->line;
    doc.name_column = name->column;
  }
  const YamlNode* spec = d.Find(root, "spec");
  doc.project = ReadDirField(d, spec, "project", "spec.project");

  DocReader reader(d, &out->errors, &bad);
  if (metadata && metadata->type == YamlNode::Type::kMap)
    CheckLabels(reader, d.Find(*metadata, "labels"), "metadata.labels");
  DecodeBody(d, reader, metadata, spec, doc);
  doc.ok = out->errors.size() == first_error;
  out->docs.push_back(std::move(doc));
}

}  // namespace

ParsedFile ParseManifestFile(std::string_view bytes, const YamlLimits& limits, SchemaChecker& checker) {
  ParsedFile out;
  YamlFile yaml = ParseYaml(bytes, limits);
  for (const auto& e : yaml.errors) out.errors.push_back({e.line, e.column, "", e.message});
  for (const auto& d : yaml.documents) DecodeDocument(d, checker, &out);
  std::stable_sort(out.errors.begin(), out.errors.end(), [](const DocError& a, const DocError& b) {
    return a.line != b.line ? a.line < b.line : a.column < b.column;
  });
  // A file with thousands of errors is one mistake repeated; list the first ones.
  if (out.errors.size() > kMaxErrorsPerFile) {
    size_t more = out.errors.size() - kMaxErrorsPerFile;
    out.errors.resize(kMaxErrorsPerFile);
    DocError last = out.errors.back();
    out.errors.push_back({last.line, last.column, "", std::to_string(more) + " more errors in this file not shown"});
  }
  return out;
}

}  // namespace tpu::manifest
