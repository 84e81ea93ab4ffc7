// Field ownership for server-side apply, in the shape Kubernetes records it
// (metadata.managedFields[].fieldsV1). An object is flattened into the set of
// its leaf paths; each path segment is spelled as FieldsV1 spells it:
// "f:name" for a field, "k:{...}" for an item of a list keyed by fields
// (x-kubernetes-list-type: map), "v:<json>" for an item of a set list. Lists
// with no list type are atomic: the whole list is one leaf, as for CRDs.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tpu::kubesim {

using json = nlohmann::json;
using FieldPath = std::vector<std::string>;
using FieldSet = std::set<FieldPath>;

// Which lists are not atomic, by schema path: field names joined with '.',
// "[]" after a list's name for its items ("spec.resourceGroups[].flavors").
struct ListTypes {
  std::map<std::string, std::vector<std::string>> map_keys;  // list-type map
  std::set<std::string> sets;                                // list-type set
};

// The leaf paths of `obj` (object fields, not the whole object). Server-owned
// metadata (resourceVersion, uid, managedFields, ...) is never a field anyone owns.
FieldSet LeavesOf(const json& obj, const ListTypes& types);

json ToFieldsV1(const FieldSet& set);
FieldSet FromFieldsV1(const json& fields);

// The value at `path`, or nullopt when absent.
std::optional<json> ValueAt(const json& obj, const FieldPath& path);

// Removes the field at `path` if present; a keyed list item left holding only
// its key fields is removed as a whole.
void RemoveAt(json& obj, const FieldPath& path, const ListTypes& types);

// `applied` merged into `live`: objects field by field, keyed lists item by
// key, sets by value, atomic lists and scalars replaced.
json MergeApplied(const json& live, const json& applied, const ListTypes& types);

// ".spec.resourceGroups" style rendering of a path, for conflict messages.
std::string PathString(const FieldPath& path);

}  // namespace tpu::kubesim
