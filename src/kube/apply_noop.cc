// ApplyChangesNothing: see apply_noop.h.
#include "kube/apply_noop.h"

#include <set>
#include <vector>

namespace tpu::kube {
namespace {

using json = nlohmann::json;
using Path = std::vector<std::string>;

// The leaf paths of an apply body, by field name. Identity and request
// metadata are not fields anyone owns.
void BodyLeaves(const json& node, Path& at, std::set<Path>& out) {
  if (!node.is_object() || node.empty()) {
    out.insert(at);
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (at.empty() && (it.key() == "apiVersion" || it.key() == "kind" || it.key() == "status")) continue;
    if (at.size() == 1 && at[0] == "metadata" &&
        (it.key() == "name" || it.key() == "namespace" || it.key() == "resourceVersion"))
      continue;
    at.push_back(it.key());
    BodyLeaves(it.value(), at, out);
    at.pop_back();
  }
}

// The leaf paths a FieldsV1 set owns, with list items folded into their list.
void OwnedLeaves(const json& node, Path& at, std::set<Path>& out) {
  bool has_fields = false;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string& k = it.key();
    if (k.rfind("k:", 0) == 0 || k.rfind("v:", 0) == 0) {
      out.insert(at);
      return;
    }
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string& k = it.key();
    if (k.rfind("f:", 0) != 0) continue;
    has_fields = true;
    at.push_back(k.substr(2));
    OwnedLeaves(it.value(), at, out);
    at.pop_back();
  }
  if (!has_fields && !at.empty()) out.insert(at);
}

const json* At(const json& obj, const Path& path) {
  const json* node = &obj;
  for (const auto& seg : path) {
    if (!node->is_object()) return nullptr;
    auto it = node->find(seg);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node;
}

}  // namespace

bool ApplyChangesNothing(const json& live, const json& desired, const std::string& manager) {
  if (!live.is_object() || !desired.is_object()) return false;
  const json* entries = At(live, {"metadata", "managedFields"});
  if (!entries || !entries->is_array()) return false;
  const json* ours = nullptr;
  for (const auto& e : *entries) {
    if (e.value("manager", "") == manager && e.value("operation", "") == "Apply" &&
        e.value("subresource", "").empty() && e.value("apiVersion", "") == desired.value("apiVersion", "")) {
      ours = &e;
      break;
    }
  }
  if (!ours || !ours->contains("fieldsV1") || !(*ours)["fieldsV1"].is_object()) return false;
  std::set<Path> owned, sent;
  Path at;
  OwnedLeaves((*ours)["fieldsV1"], at, owned);
  BodyLeaves(desired, at, sent);
  if (owned != sent) return false;
  for (const auto& path : sent) {
    const json* have = At(live, path);
    const json* want = At(desired, path);
    if (!have || !want || *have != *want) return false;
  }
  return true;
}

}  // namespace tpu::kube
