// Selector matching: equality, inequality, existence and set requirements.
#include "sim/kube/selector.h"

#include <set>
#include <vector>

namespace tpu::kubesim {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Splits on commas outside parentheses.
std::vector<std::string> Requirements(const std::string& selector) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : selector) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(Trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!Trim(cur).empty()) out.push_back(Trim(cur));
  return out;
}

const nlohmann::json* Label(const nlohmann::json& obj, const std::string& key) {
  if (!obj.contains("metadata") || !obj["metadata"].contains("labels")) return nullptr;
  const auto& labels = obj["metadata"]["labels"];
  auto it = labels.find(key);
  return it == labels.end() ? nullptr : &*it;
}

}  // namespace

bool MatchesLabels(const nlohmann::json& obj, const std::string& selector, std::string* error) {
  for (const auto& req : Requirements(selector)) {
    size_t in = req.find(" in ("), notin = req.find(" notin (");
    if (in != std::string::npos || notin != std::string::npos) {
      bool negate = notin != std::string::npos;
      size_t at = negate ? notin : in;
      std::string key = Trim(req.substr(0, at));
      size_t open = req.find('(', at), close = req.rfind(')');
      if (close == std::string::npos || close < open) {
        *error = "unable to parse requirement: " + req;
        return false;
      }
      std::set<std::string> values;
      for (const auto& v : Requirements(req.substr(open + 1, close - open - 1))) values.insert(v);
      const auto* label = Label(obj, key);
      bool member = label && values.count(label->get<std::string>());
      if (member == negate) return false;
      continue;
    }
    size_t ne = req.find("!="), eq = req.find('=');
    if (ne != std::string::npos) {
      const auto* label = Label(obj, Trim(req.substr(0, ne)));
      if (label && *label == Trim(req.substr(ne + 2))) return false;
    } else if (eq != std::string::npos) {
      size_t vstart = req.compare(eq, 2, "==") == 0 ? eq + 2 : eq + 1;
      const auto* label = Label(obj, Trim(req.substr(0, eq)));
      if (!label || *label != Trim(req.substr(vstart))) return false;
    } else if (!req.empty() && req[0] == '!') {
      if (Label(obj, Trim(req.substr(1)))) return false;
    } else if (!Label(obj, req)) {
      return false;
    }
  }
  return true;
}

bool MatchesFields(const nlohmann::json& obj, const std::string& selector, std::string* error) {
  for (const auto& req : Requirements(selector)) {
    size_t ne = req.find("!="), eq = req.find('=');
    bool negate = ne != std::string::npos;
    size_t at = negate ? ne : eq;
    if (at == std::string::npos) {
      *error = "invalid field selector: " + req;
      return false;
    }
    std::string field = Trim(req.substr(0, at));
    std::string want = Trim(req.substr(req.compare(at, 2, "==") == 0 || negate ? at + 2 : at + 1));
    std::string have;
    if (field == "metadata.name" || field == "metadata.namespace") {
      have = obj["metadata"].value(field.substr(9), "");
    } else {
      *error = "field label not supported: " + field;
      return false;
    }
    if ((have == want) == negate) return false;
  }
  return true;
}

}  // namespace tpu::kubesim
