// A small lenient/strict JSON field reader shared by the wire parsers: absent
// or null fields leave the output alone; a field of the wrong type records the
// first error (with its path) so the parser can return it as a Status.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tpu::cloud {

class WireReader {
 public:
  explicit WireReader(std::string what) : what_(std::move(what)) {}

  // The object at j[key] (or nullptr if absent/null; an error if not an object).
  const nlohmann::json* Object(const nlohmann::json& j, const char* key);
  const nlohmann::json* Array(const nlohmann::json& j, const char* key);

  void String(const nlohmann::json& j, const char* key, std::string* out);
  void String(const nlohmann::json& j, const char* key, std::optional<std::string>* out);
  void Bool(const nlohmann::json& j, const char* key, bool* out);
  void Bool(const nlohmann::json& j, const char* key, std::optional<bool>* out);
  // Accepts a JSON number or a decimal string (proto3 JSON int64).
  void Int(const nlohmann::json& j, const char* key, int* out);
  void Int(const nlohmann::json& j, const char* key, std::optional<int>* out);
  void Strings(const nlohmann::json& j, const char* key, std::vector<std::string>* out);
  void Strings(const nlohmann::json& j, const char* key, std::optional<std::vector<std::string>>* out);
  void StringMap(const nlohmann::json& j, const char* key, std::map<std::string, std::string>* out);
  void StringMap(const nlohmann::json& j, const char* key,
                 std::optional<std::map<std::string, std::string>>* out);

  void Fail(const std::string& field, const char* expected);
  bool ok() const { return error_.empty(); }
  Status status() const { return Status::InvalidArgument(what_ + ": " + error_); }

 private:
  std::string what_;
  std::string error_;
};

}  // namespace tpu::cloud
