// The request messages of the real APIs (fields, their proto and JSON names,
// enums), generated from the npm packages' protos into api_schema_data.cc by
// tools/gen_api_schema.js. The emulator validates every request body with it,
// so an unknown field or enum value gets the 400 the real API sends.
// Immutable after construction; safe to share between threads.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/sim_http.h"

namespace tpu::sim {

extern const char* const kApiSchemaChunks[];  // api_schema_data.cc

class ApiSchema {
 public:
  struct Field {
    std::string json_name;
    std::string proto_name;
    char label = '1';  // '1' singular, 'R' repeated, 'M' map
    char kind = 's';   // 's' scalar, 'm' message, 'e' enum, '*' accepted as-is
    std::string type;  // scalar type name, or full message / enum name
  };

  // The schema compiled into the binary.
  static const ApiSchema& Builtin();
  explicit ApiSchema(const char* const* chunks);

  // Checks `body` against message `type` (full name, e.g.
  // "google.container.v1.CreateNodePoolRequest"). `at` is the proto path of
  // the body in the request ("" for a body "*", else the body field name).
  // Returns the real API's message on failure. Numeric enum values (sent by
  // Google's client libraries with enum-encoding=int) are replaced in place
  // by their names, so handlers only ever see names.
  std::optional<std::string> Validate(json& body, const std::string& type,
                                      const std::string& at) const;

  bool HasMessage(const std::string& type) const { return messages_.count(type) > 0; }

 private:
  std::optional<std::string> ValidateMessage(json& v, const std::string& type,
                                             const std::string& at) const;
  std::optional<std::string> ValidateValue(json& v, const Field& f,
                                           const std::string& at) const;

  std::map<std::string, std::vector<Field>> messages_;
  struct Enum {
    std::set<std::string> names;
    std::map<int64_t, std::string> by_number;
  };
  std::map<std::string, Enum> enums_;
};

}  // namespace tpu::sim
