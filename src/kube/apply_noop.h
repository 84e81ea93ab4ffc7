// Whether a server-side apply would change nothing, so the daemon can skip it
// and a resync of an unchanged fleet writes nothing (each write costs the API
// server a resourceVersion, wakes every watcher, and with force=true could
// take fields back from a person for nothing).
//
// An apply by `manager` changes nothing when the server already records that
// manager's last apply at the same apiVersion owning exactly the fields we
// send (so none would be dropped), and each of those fields holds our value.
// Ownership is read from metadata.managedFields (FieldsV1: "f:" fields; a
// "k:"/"v:" item is counted as its whole list, which we always send whole).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tpu::kube {

// `live` is the object as read (null when absent); `desired` the apply body.
bool ApplyChangesNothing(const nlohmann::json& live, const nlohmann::json& desired, const std::string& manager);

}  // namespace tpu::kube
