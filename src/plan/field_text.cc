// Compact text of field values for FieldChange.
#include "plan/field_text.h"

namespace tpu::plan {

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string ListText(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + Quote(v[i]);
  return s + "]";
}

std::string MapText(const cloud::StringMap& m) {
  std::string s = "{";
  bool first = true;
  for (const auto& [k, v] : m) {
    s += (first ? "" : ", ") + k + " = " + Quote(v);
    first = false;
  }
  return s + "}";
}

std::string TaintsText(const std::vector<cloud::NodeTaint>& taints) {
  std::string s = "[";
  for (size_t i = 0; i < taints.size(); ++i)
    s += (i ? ", " : "") + taints[i].key + "=" + taints[i].value + ":" + taints[i].effect;
  return s + "]";
}

std::string BoolText(bool b) { return b ? "true" : "false"; }

}  // namespace tpu::plan
