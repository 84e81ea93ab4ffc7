// FieldReader: WireReader's typed field access over on-demand values.
#include "cloud/ondemand_fields.h"

#include <cstdlib>

#include <nlohmann/json.hpp>

namespace tpu::cloud::ondemand {

Status NotJson() { return Status::InvalidArgument("response is not JSON"); }

bool ValidJson(std::string_view text) { return nlohmann::json::accept(text); }

void FieldReader::Fail(std::string_view field, const char* expected) {
  if (error_.empty()) error_ = "field " + std::string(field) + ": expected " + expected;
}

void FieldReader::Adopt(const FieldReader& other) {
  if (error_.empty()) error_ = other.error_;
}

bool FieldReader::Object(Value& v, std::string_view key, ondemand::Object* out) {
  JsonType t = v.type();
  if (t == JsonType::null) return false;
  if (t != JsonType::object) {
    Fail(key, "an object");
    return false;
  }
  *out = v.get_object();
  return true;
}

bool FieldReader::Array(Value& v, std::string_view key, ondemand::Array* out) {
  JsonType t = v.type();
  if (t == JsonType::null) return false;
  if (t != JsonType::array) {
    Fail(key, "an array");
    return false;
  }
  *out = v.get_array();
  return true;
}

void FieldReader::String(Value& v, std::string_view key, std::string* out) {
  JsonType t = v.type();
  if (t == JsonType::null) return;
  if (t != JsonType::string) return Fail(key, "a string");
  std::string_view s = v.get_string();
  out->assign(s);
}

void FieldReader::String(Value& v, std::string_view key, std::optional<std::string>* out) {
  JsonType t = v.type();
  if (t == JsonType::null) return;
  if (t != JsonType::string) return Fail(key, "a string");
  std::string_view s = v.get_string();
  out->emplace(s);
}

void FieldReader::Bool(Value& v, std::string_view key, bool* out) {
  JsonType t = v.type();
  if (t == JsonType::null) return;
  if (t != JsonType::boolean) return Fail(key, "a boolean");
  *out = v.get_bool();
}

void FieldReader::Bool(Value& v, std::string_view key, std::optional<bool>* out) {
  if (IsNull(v)) return;
  bool b = false;
  Bool(v, key, &b);
  *out = b;
}

std::optional<int> FieldReader::IntOf(Value& v) {
  JsonType t = v.type();
  if (t == JsonType::number) {
    simdjson::ondemand::number_type nt;
    if (auto error = v.get_number_type().get(nt)) {
      // What simdjson refuses, nlohmann may read (an integer beyond 64 bits,
      // which it takes for a float): it decides, as it did before.
      auto n = nlohmann::json::parse(std::string_view(v.raw_json_token()), nullptr, false);
      if (n.is_discarded()) throw simdjson::simdjson_error(error);
      if (n.is_number_integer()) return static_cast<int>(n.get<int64_t>());
      return std::nullopt;
    }
    if (nt == simdjson::ondemand::number_type::signed_integer) return static_cast<int>(int64_t(v.get_int64()));
    if (nt == simdjson::ondemand::number_type::unsigned_integer)
      return static_cast<int>(uint64_t(v.get_uint64()));
    (void)double(v.get_double());  // a float: not an integer, but it must be a number (1e400 is not)
    return std::nullopt;
  }
  if (t == JsonType::string) {
    std::string s(std::string_view(v.get_string()));
    char* end = nullptr;
    long n = std::strtol(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0') return std::nullopt;
    return static_cast<int>(n);
  }
  return std::nullopt;
}

void FieldReader::Int(Value& v, std::string_view key, int* out) {
  if (IsNull(v)) return;
  if (auto n = IntOf(v)) *out = *n;
  else Fail(key, "an integer");
}

void FieldReader::Int(Value& v, std::string_view key, std::optional<int>* out) {
  if (IsNull(v)) return;
  if (auto n = IntOf(v)) *out = *n;
  else Fail(key, "an integer");
}

void FieldReader::Strings(Value& v, std::string_view key, std::vector<std::string>* out) {
  ondemand::Array a;
  if (!Array(v, key, &a)) return;
  out->clear();
  for (auto item : a) {
    Value s = item.value();
    if (s.type() != JsonType::string) return Fail(key, "an array of strings");
    out->emplace_back(std::string_view(s.get_string()));
  }
}

void FieldReader::Strings(Value& v, std::string_view key, std::optional<std::vector<std::string>>* out) {
  if (IsNull(v)) return;
  std::vector<std::string> list;
  Strings(v, key, &list);
  *out = std::move(list);
}

void FieldReader::StringMap(Value& v, std::string_view key, std::map<std::string, std::string>* out) {
  ondemand::Object o;
  if (!Object(v, key, &o)) return;
  out->clear();
  bool failed = false;
  ForEachField(o, [&](std::string_view k, Value& item) {
    if (failed) return;
    if (item.type() != JsonType::string) {
      failed = true;
      return Fail(std::string(key) + "." + std::string(k), "a string");
    }
    std::string_view s = item.get_string();
    // A repeated key keeps its last value, as with operator[]; the hint makes
    // keys that come in order (they usually do) an append.
    out->insert_or_assign(out->end(), std::string(k), s);
  });
}

void FieldReader::StringMap(Value& v, std::string_view key,
                            std::optional<std::map<std::string, std::string>>* out) {
  if (IsNull(v)) return;
  std::map<std::string, std::string> m;
  StringMap(v, key, &m);
  *out = std::move(m);
}

}  // namespace tpu::cloud::ondemand
