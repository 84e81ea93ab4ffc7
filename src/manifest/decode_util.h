// Helpers shared by the per-kind decoders (decode_*.cc): typed reads from a
// YAML map that quietly yield nothing when the schema already reported the
// field, and error reporting at a node. Internal to src/manifest.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "manifest/doc_error.h"
#include "manifest/types.h"
#include "manifest/yaml_tree.h"

namespace tpu::manifest {

class DocReader {
 public:
  DocReader(const YamlDocument& doc, std::vector<DocError>* errors, const std::set<std::string>* bad)
      : doc_(doc), errors_(errors), bad_(bad) {}

  const YamlDocument& doc() const { return doc_; }
  // The map under `key`, or nullptr.
  const YamlNode* Map(const YamlNode* parent, const char* key) const;
  const YamlNode* Node(const YamlNode* parent, const char* key) const;
  // Typed reads; nullopt when absent or not of that type (the schema reports it).
  std::optional<std::string> Str(const YamlNode* parent, const char* key) const;
  std::optional<int> Int(const YamlNode* parent, const char* key) const;
  std::optional<bool> Bool(const YamlNode* parent, const char* key) const;
  std::optional<StringMap> Strings(const YamlNode* parent, const char* key) const;
  std::optional<std::vector<std::string>> List(const YamlNode* parent, const char* key) const;

  // Whether the schema already reported `field` (later checks skip it).
  bool Bad(const std::string& field) const { return bad_->count(field) > 0; }
  // Reports at `at` (the key of `key` in `parent` when it exists, else `parent`).
  void Error(const YamlNode* parent, const char* key, std::string field, std::string message);
  void ErrorAt(const YamlNode& at, std::string field, std::string message);
  bool failed() const { return failed_; }

 private:
  const YamlDocument& doc_;
  std::vector<DocError>* errors_;
  const std::set<std::string>* bad_;
  bool failed_ = false;
};

// Label maps (Kubernetes rules) and resource labels (GCP rules), key by key.
void CheckLabels(DocReader& r, const YamlNode* map, const std::string& field);
void CheckResourceLabels(DocReader& r, const YamlNode* map, const std::string& field);
// metadata.annotations' tpu-provisioner.io/* keys.
Annotations ReadAnnotations(DocReader& r, const YamlNode* metadata);

// Per-kind decoders: fill `out` and report semantic errors through `r`.
void DecodePool(DocReader& r, TPUNodePool* out);
void DecodeGroup(DocReader& r, TPUNodeGroup* out);
void DecodeCluster(DocReader& r, ClusterPolicy* out);
// "1h30m", "90s", "5m" → seconds; nullopt when malformed.
std::optional<int> ParseDurationSeconds(const std::string& s);
// spec.changeWindows of a Cluster (decode_windows.cc).
void DecodeChangeWindows(DocReader& r, const YamlNode* spec, std::vector<ChangeWindow>* out);
// spec.demand of a Cluster (decode_demand.cc).
void DecodeDemand(DocReader& r, const YamlNode* demand, DemandPolicy* out);

}  // namespace tpu::manifest
