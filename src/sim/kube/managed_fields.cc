// Field ownership rules of server-side apply (structured-merge-diff), reduced
// to leaf sets: enough for conflicts, shared ownership and removal of fields
// an applier stops declaring.
#include "sim/kube/managed_fields.h"

#include <algorithm>

namespace tpu::kubesim {
namespace {

ManagerEntry* FindEntry(std::vector<ManagerEntry>& entries, const Writer& who,
                        const std::string& operation) {
  for (auto& e : entries) {
    if (e.manager == who.manager && e.operation == operation && e.subresource == who.subresource) {
      return &e;
    }
  }
  entries.push_back({who.manager, operation, who.api_version, who.subresource, who.time, {}});
  return &entries.back();
}

bool OwnedByOther(const std::vector<ManagerEntry>& entries, const ManagerEntry* self,
                  const FieldPath& path) {
  for (const auto& e : entries) {
    if (&e != self && e.fields.count(path)) return true;
  }
  return false;
}

}  // namespace

std::vector<ManagerEntry> ReadManagedFields(const json& obj) {
  std::vector<ManagerEntry> out;
  if (!obj.is_object() || !obj.contains("metadata")) return out;
  const json& meta = obj["metadata"];
  if (!meta.contains("managedFields") || !meta["managedFields"].is_array()) return out;
  for (const auto& m : meta["managedFields"]) {
    ManagerEntry e;
    e.manager = m.value("manager", "");
    e.operation = m.value("operation", "Update");
    e.api_version = m.value("apiVersion", "");
    e.subresource = m.value("subresource", "");
    e.time = m.value("time", "");
    if (m.contains("fieldsV1")) e.fields = FromFieldsV1(m["fieldsV1"]);
    out.push_back(std::move(e));
  }
  return out;
}

void WriteManagedFields(json& obj, const std::vector<ManagerEntry>& entries) {
  json list = json::array();
  for (const auto& e : entries) {
    if (e.fields.empty()) continue;
    json m = {{"manager", e.manager}, {"operation", e.operation}, {"apiVersion", e.api_version},
              {"time", e.time}, {"fieldsType", "FieldsV1"}, {"fieldsV1", ToFieldsV1(e.fields)}};
    if (!e.subresource.empty()) m["subresource"] = e.subresource;
    list.push_back(std::move(m));
  }
  obj["metadata"]["managedFields"] = std::move(list);
}

void RecordUpdate(std::vector<ManagerEntry>& entries, const json& before, const json& after,
                  const Writer& who, const ListTypes& types) {
  const FieldSet now = LeavesOf(after, types);
  FieldSet changed;
  for (const auto& path : now) {
    auto old = before.is_null() ? std::nullopt : ValueAt(before, path);
    if (!old || *old != *ValueAt(after, path)) changed.insert(path);
  }
  ManagerEntry* self = FindEntry(entries, who, "Update");
  self->time = who.time;
  self->api_version = who.api_version;
  for (auto& e : entries) {
    for (auto it = e.fields.begin(); it != e.fields.end();) {
      bool gone = !now.count(*it);
      bool taken = &e != self && changed.count(*it) && e.subresource == who.subresource;
      it = (gone || taken) ? e.fields.erase(it) : std::next(it);
    }
  }
  self->fields.insert(changed.begin(), changed.end());
}

ApplyResult ApplyConfig(std::vector<ManagerEntry>& entries, const json& live,
                        const json& applied, const Writer& who, bool force,
                        const ListTypes& types) {
  ApplyResult result;
  const FieldSet want = LeavesOf(applied, types);
  // Conflicts: a leaf someone else owns, which this apply would change.
  for (auto& e : entries) {
    if (e.manager == who.manager && e.operation == "Apply") continue;
    for (const auto& path : want) {
      if (!e.fields.count(path) || live.is_null()) continue;
      auto current = ValueAt(live, path);
      if (current && *current == *ValueAt(applied, path)) continue;  // shared ownership
      if (force) {
        e.fields.erase(path);
      } else {
        result.conflicts.push_back({e.manager, path});
      }
    }
  }
  if (!result.conflicts.empty()) return result;

  ManagerEntry* self = FindEntry(entries, who, "Apply");
  json object = live.is_null() ? json::object() : live;
  for (const auto& path : self->fields) {
    if (!want.count(path) && !OwnedByOther(entries, self, path)) RemoveAt(object, path, types);
  }
  object = MergeApplied(object, applied, types);
  self->fields = want;
  self->time = who.time;
  self->api_version = who.api_version;
  // Leaves that no longer exist are owned by no one.
  const FieldSet now = LeavesOf(object, types);
  for (auto& e : entries) {
    for (auto it = e.fields.begin(); it != e.fields.end();) {
      it = now.count(*it) ? std::next(it) : e.fields.erase(it);
    }
  }
  result.object = std::move(object);
  return result;
}

}  // namespace tpu::kubesim
