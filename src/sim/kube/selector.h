// Label and field selectors as list and watch take them
// ("a=b,c!=d,e,!f,g in (x,y),h notin (z)"; fields: metadata.name/namespace).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tpu::kubesim {

// True when `obj` matches; a malformed selector sets *error and matches nothing.
bool MatchesLabels(const nlohmann::json& obj, const std::string& selector, std::string* error);
bool MatchesFields(const nlohmann::json& obj, const std::string& selector, std::string* error);

}  // namespace tpu::kubesim
