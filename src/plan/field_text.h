// How FieldChange values are written: strings quoted, lists `["a", "b"]`, maps
// `{k = "v", …}`, taints `key=value:EFFECT`, "(unset)" for absent values. One
// spelling for text and JSON output so tests can assert exact changes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cloud/types.h"

namespace tpu::plan {

inline constexpr const char* kUnset = "(unset)";

std::string Quote(const std::string& s);
std::string ListText(const std::vector<std::string>& v);
std::string MapText(const cloud::StringMap& m);
std::string TaintsText(const std::vector<cloud::NodeTaint>& taints);
std::string BoolText(bool b);
template <typename T>
std::string OptText(const std::optional<T>& v, std::string (*f)(const T&)) {
  return v ? f(*v) : kUnset;
}

}  // namespace tpu::plan
