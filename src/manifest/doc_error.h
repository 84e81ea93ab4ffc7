// DocError: a problem in one YAML document, before the document has a file
// name. Parsed files are cached by content id, so the same result may be
// reused for another path; the loader stamps the file when it builds Errors.
// Also the one spelling of field paths: spec.nodeConfig.taints[0].key, and
// labels["cloud.google.com/gke-spot"] for keys that hold '.' or '/'.
#pragma once

#include <string>
#include <string_view>

namespace tpu::manifest {

struct DocError {
  int line = 0;
  int column = 0;
  std::string field;
  std::string message;
};

inline std::string FieldPath(std::string_view parent, std::string_view key) {
  if (key.find_first_of("./\"[] ") != std::string_view::npos)
    return std::string(parent) + "[\"" + std::string(key) + "\"]";
  if (parent.empty()) return std::string(key);
  return std::string(parent) + "." + std::string(key);
}

inline std::string IndexPath(std::string_view parent, size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

}  // namespace tpu::manifest
