// Server-side apply field sets: flattening objects to leaf paths and merging
// applied configuration, following the structured-merge-diff rules.
#include "sim/kube/field_set.h"

#include <algorithm>
#include <functional>

namespace tpu::kubesim {
namespace {

bool IsServerOwned(const FieldPath& at, const std::string& field) {
  if (at.empty()) return field == "apiVersion" || field == "kind";
  if (at.size() == 1 && at[0] == "f:metadata") {
    static const std::set<std::string> kServer = {
        "name", "namespace", "resourceVersion", "uid", "creationTimestamp", "generation",
        "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"};
    return kServer.count(field) > 0;
  }
  return false;
}

std::string Join(const std::string& schema, const std::string& field) {
  return schema.empty() ? field : schema + "." + field;
}

json KeyOf(const json& item, const std::vector<std::string>& keys) {
  json k = json::object();
  for (const auto& name : keys) {
    if (item.is_object() && item.contains(name)) k[name] = item[name];
  }
  return k;
}

void Collect(const json& v, const std::string& schema, FieldPath& at, FieldSet& out,
             const ListTypes& types) {
  if (v.is_object() && !v.empty()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (IsServerOwned(at, it.key())) continue;
      at.push_back("f:" + it.key());
      Collect(it.value(), Join(schema, it.key()), at, out, types);
      at.pop_back();
    }
    return;
  }
  if (v.is_array()) {
    auto keyed = types.map_keys.find(schema);
    if (keyed != types.map_keys.end()) {
      for (const auto& item : v) {
        at.push_back("k:" + KeyOf(item, keyed->second).dump());
        Collect(item, schema + "[]", at, out, types);
        at.pop_back();
      }
      return;
    }
    if (types.sets.count(schema)) {
      for (const auto& item : v) {
        at.push_back("v:" + item.dump());
        out.insert(at);
        at.pop_back();
      }
      return;
    }
  }
  if (!at.empty()) out.insert(at);  // scalar, empty object, atomic list
}

// The element of `list` a "k:" or "v:" segment names, or list.end().
json::iterator FindItem(json& list, const std::string& segment) {
  json want = json::parse(segment.substr(2), nullptr, false);
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (segment[0] == 'v') {
      if (*it == want) return it;
      continue;
    }
    bool match = it->is_object();
    for (auto k = want.begin(); match && k != want.end(); ++k) {
      match = it->contains(k.key()) && (*it)[k.key()] == k.value();
    }
    if (match) return it;
  }
  return list.end();
}

// The schema path of a FieldPath, for looking up list types.
std::string SchemaOf(const FieldPath& path, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    if (path[i].rfind("f:", 0) == 0) {
      s = Join(s, path[i].substr(2));
    } else {
      s += "[]";
    }
  }
  return s;
}

}  // namespace

FieldSet LeavesOf(const json& obj, const ListTypes& types) {
  FieldSet out;
  FieldPath at;
  Collect(obj, "", at, out, types);
  return out;
}

json ToFieldsV1(const FieldSet& set) {
  json root = json::object();
  for (const auto& path : set) {
    json* node = &root;
    for (const auto& seg : path) {
      if (!node->contains(seg)) (*node)[seg] = json::object();
      node = &(*node)[seg];
      // An item of a keyed list owns its own existence too ("." in FieldsV1).
      if (seg[0] == 'k') (*node)["."] = json::object();
    }
  }
  return root;
}

FieldSet FromFieldsV1(const json& fields) {
  FieldSet out;
  FieldPath at;
  std::function<void(const json&)> walk = [&](const json& node) {
    bool leaf = true;
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it.key() == ".") continue;
      leaf = false;
      at.push_back(it.key());
      walk(it.value());
      at.pop_back();
    }
    if (leaf && !at.empty()) out.insert(at);
  };
  if (fields.is_object()) walk(fields);
  return out;
}

std::optional<json> ValueAt(const json& obj, const FieldPath& path) {
  json copy = obj;  // FindItem needs a mutable list; objects here are small
  json* node = &copy;
  for (const auto& seg : path) {
    if (seg.rfind("f:", 0) == 0) {
      if (!node->is_object() || !node->contains(seg.substr(2))) return std::nullopt;
      node = &(*node)[seg.substr(2)];
    } else {
      if (!node->is_array()) return std::nullopt;
      auto it = FindItem(*node, seg);
      if (it == node->end()) return std::nullopt;
      node = &*it;
    }
  }
  return *node;
}

void RemoveAt(json& obj, const FieldPath& path, const ListTypes& types) {
  if (path.empty()) return;
  std::vector<json*> chain = {&obj};
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    json* node = chain.back();
    const auto& seg = path[i];
    if (seg.rfind("f:", 0) == 0) {
      if (!node->is_object() || !node->contains(seg.substr(2))) return;
      chain.push_back(&(*node)[seg.substr(2)]);
    } else {
      if (!node->is_array()) return;
      auto it = FindItem(*node, seg);
      if (it == node->end()) return;
      chain.push_back(&*it);
    }
  }
  json* parent = chain.back();
  const auto& last = path.back();
  const size_t n = path.size();
  if (last.rfind("f:", 0) == 0 && n >= 2 && path[n - 2][0] == 'k' && chain.size() >= 2) {
    // A key field of a keyed item goes only with the item: removed first, the
    // item could no longer be found to remove its other fields.
    auto keyed = types.map_keys.find(SchemaOf(path, n - 2));
    const std::string field = last.substr(2);
    if (keyed != types.map_keys.end() &&
        std::find(keyed->second.begin(), keyed->second.end(), field) != keyed->second.end()) {
      bool only_keys = true;
      for (auto it = parent->begin(); it != parent->end(); ++it)
        if (std::find(keyed->second.begin(), keyed->second.end(), it.key()) == keyed->second.end()) only_keys = false;
      json* list = chain[chain.size() - 2];
      auto it = FindItem(*list, path[n - 2]);
      if (only_keys && it != list->end()) list->erase(it);
      return;
    }
  }
  if (last.rfind("f:", 0) == 0) {
    if (parent->is_object()) parent->erase(last.substr(2));
  } else if (parent->is_array()) {
    auto it = FindItem(*parent, last);
    if (it != parent->end()) parent->erase(it);
    // A set or keyed list left empty by its last owned item goes too.
    if (parent->empty() && chain.size() >= 2 && chain[chain.size() - 2]->is_object() && n >= 2 &&
        path[n - 2].rfind("f:", 0) == 0)
      chain[chain.size() - 2]->erase(path[n - 2].substr(2));
  }
  // A keyed item holding nothing but its keys was owned only through them.
  for (size_t depth = path.size() - 1; depth >= 1; --depth) {
    if (path[depth - 1][0] != 'k' || chain.size() < depth + 1) continue;
    json* item = chain[depth];
    auto keyed = types.map_keys.find(SchemaOf(path, depth - 1));
    if (keyed == types.map_keys.end() || !item->is_object()) continue;
    bool only_keys = true;
    for (auto it = item->begin(); it != item->end(); ++it) {
      if (std::find(keyed->second.begin(), keyed->second.end(), it.key()) == keyed->second.end()) {
        only_keys = false;
      }
    }
    if (only_keys) {
      json* list = chain[depth - 1];
      auto it = FindItem(*list, path[depth - 1]);
      if (it != list->end()) list->erase(it);
    }
    break;
  }
}

namespace {

json Merge(const json& live, const json& applied, const std::string& schema,
           const ListTypes& types) {
  if (applied.is_object() && live.is_object()) {
    json out = live;
    for (auto it = applied.begin(); it != applied.end(); ++it) {
      const std::string child = Join(schema, it.key());
      out[it.key()] = out.contains(it.key()) ? Merge(out[it.key()], it.value(), child, types)
                                             : it.value();
    }
    return out;
  }
  if (applied.is_array() && live.is_array()) {
    auto keyed = types.map_keys.find(schema);
    if (keyed != types.map_keys.end()) {
      json out = live;
      for (const auto& item : applied) {
        auto it = FindItem(out, "k:" + KeyOf(item, keyed->second).dump());
        if (it == out.end()) {
          out.push_back(item);
        } else {
          *it = Merge(*it, item, schema + "[]", types);
        }
      }
      return out;
    }
    if (types.sets.count(schema)) {
      json out = live;
      for (const auto& item : applied) {
        if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
      }
      return out;
    }
  }
  return applied;
}

}  // namespace

json MergeApplied(const json& live, const json& applied, const ListTypes& types) {
  return Merge(live, applied, "", types);
}

std::string PathString(const FieldPath& path) {
  std::string s;
  for (const auto& seg : path) {
    if (seg.rfind("f:", 0) == 0) {
      s += "." + seg.substr(2);
    } else {
      s += "[" + seg.substr(2) + "]";
    }
  }
  return s;
}

}  // namespace tpu::kubesim
