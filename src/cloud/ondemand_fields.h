// WireReader's rules (wire_reader.h) over simdjson's on-demand values, for the
// list readers (list_reader.h): a null field leaves the output alone; a field
// of the wrong type records the first error, worded as WireReader words it
// ("node pool: field labels.team: expected a string"). Each method reads the
// value of a field the caller has just found while walking an object once, in
// document order; malformed JSON throws simdjson::simdjson_error, which the
// list readers turn into "response is not JSON".
//
// Internal to cloud/: only the list readers include simdjson.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "base/status.h"

namespace tpu::cloud::ondemand {

using Value = simdjson::ondemand::value;
using Object = simdjson::ondemand::object;
using Array = simdjson::ondemand::array;
using JsonType = simdjson::ondemand::json_type;

// "response is not JSON", as ApiCaller::Call words it.
Status NotJson();
// Whether `text` is JSON, for the rare body that is not an object.
bool ValidJson(std::string_view text);

// Calls f(key, value) for every field of `object`, in document order.
template <typename F>
void ForEachField(Object object, F&& f) {
  for (auto result : object) {
    simdjson::ondemand::field field;
    if (auto error = std::move(result).get(field)) throw simdjson::simdjson_error(error);
    std::string_view key = field.unescaped_key();
    f(key, field.value());
  }
}

// Parses `body` (padded in place) and calls f(object&) -> Status with its
// top-level object. A body that is JSON but not an object gives `not_object`.
// Malformed JSON, wherever f meets it, and text after the object fail with
// "response is not JSON"; an empty body calls nothing (the API's empty answer).
template <typename F>
Status ReadDocument(std::string& body, const Status& not_object, F&& f) {
  if (body.empty()) return Status::OK();
  body.reserve(body.size() + simdjson::SIMDJSON_PADDING);
  try {
    simdjson::ondemand::parser parser;
    simdjson::ondemand::document doc =
        parser.iterate(simdjson::padded_string_view(body.data(), body.size(), body.capacity()));
    if (doc.type() != JsonType::object) return ValidJson(body) ? not_object : NotJson();
    Status s = f(doc.get_object().value());
    const char* rest = nullptr;  // past the end: OUT_OF_BOUNDS
    if (s.ok() && doc.current_location().get(rest) == simdjson::SUCCESS) return NotJson();
    return s;
  } catch (const simdjson::simdjson_error&) {
    return NotJson();
  }
}

class FieldReader {
 public:
  explicit FieldReader(const char* what) : what_(what) {}

  static bool IsNull(Value& v) { return v.type() == JsonType::null; }
  // True when `v` is an object (into *out); null quietly false; another type an error.
  bool Object(Value& v, std::string_view key, ondemand::Object* out);
  bool Array(Value& v, std::string_view key, ondemand::Array* out);

  void String(Value& v, std::string_view key, std::string* out);
  void String(Value& v, std::string_view key, std::optional<std::string>* out);
  void Bool(Value& v, std::string_view key, bool* out);
  void Bool(Value& v, std::string_view key, std::optional<bool>* out);
  // A JSON integer or a decimal string (proto3 JSON int64), as WireReader::Int.
  void Int(Value& v, std::string_view key, int* out);
  void Int(Value& v, std::string_view key, std::optional<int>* out);
  void Strings(Value& v, std::string_view key, std::vector<std::string>* out);
  void Strings(Value& v, std::string_view key, std::optional<std::vector<std::string>>* out);
  void StringMap(Value& v, std::string_view key, std::map<std::string, std::string>* out);
  void StringMap(Value& v, std::string_view key, std::optional<std::map<std::string, std::string>>* out);

  void Fail(std::string_view field, const char* expected);
  // Takes `other`'s error when this reader has none yet: a field read ahead
  // into a scratch reader counts only once the caller knows it is used.
  void Adopt(const FieldReader& other);
  bool ok() const { return error_.empty(); }
  Status status() const { return Status::InvalidArgument(std::string(what_) + ": " + error_); }

 private:
  // The integer in `v`, or nullopt when it is none (and not null).
  static std::optional<int> IntOf(Value& v);

  const char* what_;
  std::string error_;
};

}  // namespace tpu::cloud::ondemand
