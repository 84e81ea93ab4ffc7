// KubeEffect, StringMapNode, ListNode, Emit, Header, Annotate: see yaml_emit.h.
#include "export/yaml_emit.h"

#include <set>

namespace tpu::exporter {
namespace {

// Fields that are numbers or booleans in the schemas; every other scalar is a string.
bool IsNumberField(const std::string& key) {
  static const std::set<std::string> kNumbers = {"nodeCount", "slices", "minNodeCount", "maxNodeCount",
                                                 "diskSizeGb", "bootDiskSizeGB", "autoRepair", "autoUpgrade",
                                                 "enabled"};
  return kNumbers.count(key) > 0;
}

// A string YAML would read as something else (a bool, a null, a number).
bool NeedsQuotes(const std::string& s) {
  static const std::set<std::string> kWords = {"true", "false", "yes", "no", "on", "off", "y", "n", "null", "~",
                                               "True", "False", "Yes", "No", "On", "Off", "TRUE", "FALSE",
                                               "YES", "NO", "ON", "OFF", "Null", "NULL", "Y", "N"};
  if (s.empty() || kWords.count(s)) return true;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  bool digits = i < s.size();
  for (; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i])) && s[i] != '.' && s[i] != 'e' && s[i] != 'E' && s[i] != '_')
      digits = false;
  return digits;
}

void EmitNode(YAML::Emitter& e, const YAML::Node& n, const std::string& key) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      e << YAML::BeginMap;
      for (auto it = n.begin(); it != n.end(); ++it) {
        std::string k = it->first.as<std::string>();
        e << YAML::Key << k << YAML::Value;
        EmitNode(e, it->second, k);
      }
      e << YAML::EndMap;
      break;
    case YAML::NodeType::Sequence:
      e << (n.Style() == YAML::EmitterStyle::Flow ? YAML::Flow : YAML::Block) << YAML::BeginSeq;
      for (const auto& item : n) EmitNode(e, item, "");
      e << YAML::EndSeq;
      break;
    default: {
      const std::string& v = n.Scalar();
      if (!IsNumberField(key) && (NeedsQuotes(v) || key == "version")) e << YAML::DoubleQuoted << v;
      else e << v;
    }
  }
}

}  // namespace

std::string KubeEffect(const std::string& gke) {
  if (gke == "NO_SCHEDULE") return "NoSchedule";
  if (gke == "PREFER_NO_SCHEDULE") return "PreferNoSchedule";
  if (gke == "NO_EXECUTE") return "NoExecute";
  return gke;
}

YAML::Node StringMapNode(const cloud::StringMap& m) {
  YAML::Node n(YAML::NodeType::Map);
  for (const auto& [k, v] : m) n[k] = v;
  return n;
}

YAML::Node ListNode(const std::vector<std::string>& v) {
  YAML::Node n(YAML::NodeType::Sequence);
  for (const auto& s : v) n.push_back(s);
  n.SetStyle(YAML::EmitterStyle::Flow);
  return n;
}

std::string Emit(const YAML::Node& doc) {
  YAML::Emitter e;
  EmitNode(e, doc, "");
  return std::string(e.c_str()) + "\n";
}

YAML::Node Header(const char* api_version, const char* kind, const std::string& name) {
  YAML::Node doc;
  doc["apiVersion"] = api_version;
  doc["kind"] = kind;
  doc["metadata"]["name"] = name;
  return doc;
}

void Annotate(YAML::Node& doc, const manifest::Annotations& a) {
  YAML::Node an(YAML::NodeType::Map);
  if (a.adopt) an["tpu-provisioner.io/adopt"] = "true";
  if (a.prevent_destroy) an["tpu-provisioner.io/prevent-destroy"] = "true";
  if (a.abandon) an["tpu-provisioner.io/deletion-policy"] = "abandon";
  if (an.size()) doc["metadata"]["annotations"] = an;
}

}  // namespace tpu::exporter
