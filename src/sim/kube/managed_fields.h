// metadata.managedFields bookkeeping: who owns which fields after an update
// (create, PUT, merge patch) or a server-side apply, and apply conflicts.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/kube/field_set.h"

namespace tpu::kubesim {

struct ManagerEntry {
  std::string manager;
  std::string operation;    // "Apply" | "Update"
  std::string api_version;
  std::string subresource;  // "" or "status"
  std::string time;
  FieldSet fields;
};

std::vector<ManagerEntry> ReadManagedFields(const json& obj);
// Writes `entries` into obj.metadata.managedFields, dropping empty ones.
void WriteManagedFields(json& obj, const std::vector<ManagerEntry>& entries);

struct Writer {
  std::string manager;
  std::string api_version;
  std::string subresource;
  std::string time;
};

// An update by `who` turned `before` into `after`: it now owns every leaf it
// changed, which other managers lose; leaves that vanished are owned by none.
void RecordUpdate(std::vector<ManagerEntry>& entries, const json& before, const json& after,
                  const Writer& who, const ListTypes& types);

struct Conflict {
  std::string manager;
  FieldPath path;
};

struct ApplyResult {
  json object;                     // valid when conflicts is empty
  std::vector<Conflict> conflicts;
};

// Server-side apply of `applied` by `who` over `live` (null when absent).
// Fields `who` applied before and omits now are removed unless someone else
// owns them. A leaf another manager owns with a different value conflicts;
// `force` takes it over instead.
ApplyResult ApplyConfig(std::vector<ManagerEntry>& entries, const json& live,
                        const json& applied, const Writer& who, bool force,
                        const ListTypes& types);

}  // namespace tpu::kubesim
