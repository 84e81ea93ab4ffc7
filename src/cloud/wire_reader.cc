// WireReader: typed field access with the first type error kept.
#include "cloud/wire_reader.h"

#include <cstdlib>

namespace tpu::cloud {
namespace {

const nlohmann::json* Field(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

}  // namespace

void WireReader::Fail(const std::string& field, const char* expected) {
  if (error_.empty()) error_ = "field " + field + ": expected " + expected;
}

const nlohmann::json* WireReader::Object(const nlohmann::json& j, const char* key) {
  auto* f = Field(j, key);
  if (f && !f->is_object()) {
    Fail(key, "an object");
    return nullptr;
  }
  return f;
}

const nlohmann::json* WireReader::Array(const nlohmann::json& j, const char* key) {
  auto* f = Field(j, key);
  if (f && !f->is_array()) {
    Fail(key, "an array");
    return nullptr;
  }
  return f;
}

void WireReader::String(const nlohmann::json& j, const char* key, std::string* out) {
  auto* f = Field(j, key);
  if (!f) return;
  if (!f->is_string()) return Fail(key, "a string");
  *out = f->get<std::string>();
}

void WireReader::String(const nlohmann::json& j, const char* key, std::optional<std::string>* out) {
  std::string s;
  auto* f = Field(j, key);
  if (!f) return;
  String(j, key, &s);
  if (f->is_string()) *out = s;
}

void WireReader::Bool(const nlohmann::json& j, const char* key, bool* out) {
  auto* f = Field(j, key);
  if (!f) return;
  if (!f->is_boolean()) return Fail(key, "a boolean");
  *out = f->get<bool>();
}

void WireReader::Bool(const nlohmann::json& j, const char* key, std::optional<bool>* out) {
  if (!Field(j, key)) return;
  bool v = false;
  Bool(j, key, &v);
  *out = v;
}

void WireReader::Int(const nlohmann::json& j, const char* key, int* out) {
  auto* f = Field(j, key);
  if (!f) return;
  if (f->is_number_integer()) {
    *out = f->get<int>();
  } else if (f->is_string()) {
    const std::string& s = f->get_ref<const std::string&>();
    char* end = nullptr;
    long v = std::strtol(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0') return Fail(key, "an integer");
    *out = static_cast<int>(v);
  } else {
    Fail(key, "an integer");
  }
}

void WireReader::Int(const nlohmann::json& j, const char* key, std::optional<int>* out) {
  if (!Field(j, key)) return;
  int v = 0;
  std::string before = error_;
  Int(j, key, &v);
  if (error_ == before) *out = v;
}

void WireReader::Strings(const nlohmann::json& j, const char* key, std::vector<std::string>* out) {
  auto* a = Array(j, key);
  if (!a) return;
  out->clear();
  for (const auto& item : *a) {
    if (!item.is_string()) return Fail(key, "an array of strings");
    out->push_back(item.get<std::string>());
  }
}

void WireReader::Strings(const nlohmann::json& j, const char* key, std::optional<std::vector<std::string>>* out) {
  if (!Field(j, key)) return;
  std::vector<std::string> v;
  Strings(j, key, &v);
  *out = std::move(v);
}

void WireReader::StringMap(const nlohmann::json& j, const char* key, std::map<std::string, std::string>* out) {
  auto* o = Object(j, key);
  if (!o) return;
  out->clear();
  for (auto it = o->begin(); it != o->end(); ++it) {
    if (!it.value().is_string()) return Fail(std::string(key) + "." + it.key(), "a string");
    (*out)[it.key()] = it.value().get<std::string>();
  }
}

void WireReader::StringMap(const nlohmann::json& j, const char* key,
                           std::optional<std::map<std::string, std::string>>* out) {
  if (!Field(j, key)) return;
  std::map<std::string, std::string> m;
  StringMap(j, key, &m);
  *out = std::move(m);
}

}  // namespace tpu::cloud
