// Parses the generated schema table and validates JSON bodies against it with
// the wording of Google's JSON transcoding errors.
#include "sim/api_schema.h"

#include <cctype>
#include <sstream>

namespace tpu::sim {

ApiSchema::ApiSchema(const char* const* chunks) {
  std::string current;
  for (const char* const* c = chunks; *c; ++c) {
    std::istringstream in(*c);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      std::string tag;
      ls >> tag;
      if (tag == "M") {
        ls >> current;
        messages_[current];
      } else if (tag == "F") {
        Field f;
        std::string label, kind;
        ls >> f.json_name >> f.proto_name >> label >> kind >> f.type;
        f.label = label[0];
        f.kind = kind[0];
        messages_[current].push_back(f);
      } else if (tag == "E") {
        std::string name, value;
        ls >> name;
        Enum& e = enums_[name];
        while (ls >> value) {
          const auto eq = value.find('=');
          e.names.insert(value.substr(0, eq));
          if (eq != std::string::npos) e.by_number[std::stoll(value.substr(eq + 1))] = value.substr(0, eq);
        }
      }
    }
  }
}

const ApiSchema& ApiSchema::Builtin() {
  static const ApiSchema* schema = new ApiSchema(kApiSchemaChunks);
  return *schema;
}

std::optional<std::string> ApiSchema::Validate(json& body, const std::string& type,
                                               const std::string& at) const {
  if (body.is_null()) return std::nullopt;
  return ValidateMessage(body, type, at);
}

namespace {

std::string Join(const std::string& at, const std::string& name) {
  return at.empty() ? name : at + "." + name;
}

std::string UnknownName(const std::string& name, const std::string& at) {
  std::string where = at.empty() ? "" : " at '" + at + "'";
  return "Invalid JSON payload received. Unknown name \"" + name + "\"" + where +
         ": Cannot find field.";
}

bool IsIntegral(const std::string& t) {
  return t == "int32" || t == "int64" || t == "uint32" || t == "uint64" || t == "sint32" ||
         t == "sint64" || t == "fixed32" || t == "fixed64" || t == "sfixed32" || t == "sfixed64";
}

}  // namespace

std::optional<std::string> ApiSchema::ValidateMessage(json& v, const std::string& type,
                                                      const std::string& at) const {
  auto it = messages_.find(type);
  if (it == messages_.end()) return std::nullopt;  // not modelled: accepted as-is
  if (!v.is_object()) {
    return "Invalid JSON payload received. Expected an object" +
           (at.empty() ? std::string() : " at '" + at + "'") + ".";
  }
  for (auto& [key, value] : v.items()) {
    const Field* field = nullptr;
    for (const auto& f : it->second) {
      // The JSON parser accepts both the lowerCamelCase and the proto name.
      if (f.json_name == key || f.proto_name == key) { field = &f; break; }
    }
    if (!field) return UnknownName(key, at);
    if (value.is_null()) continue;
    std::string path = Join(at, field->proto_name);
    if (field->label == 'R') {
      if (!value.is_array())
        return "Invalid value at '" + path + "', expected a list.";
      for (auto& e : value)
        if (auto err = ValidateValue(e, *field, path)) return err;
    } else if (field->label == 'M') {
      if (!value.is_object())
        return "Invalid value at '" + path + "', expected a map.";
      for (auto& [k, e] : value.items())
        if (auto err = ValidateValue(e, *field, path + "[" + k + "]")) return err;
    } else if (auto err = ValidateValue(value, *field, path)) {
      return err;
    }
  }
  return std::nullopt;
}

std::optional<std::string> ApiSchema::ValidateValue(json& v, const Field& f,
                                                    const std::string& at) const {
  switch (f.kind) {
    case 'm':
      return ValidateMessage(v, f.type, at);
    case 'e': {
      auto e = enums_.find(f.type);
      if (e == enums_.end()) return std::nullopt;
      if (v.is_string() && e->second.names.count(v.get<std::string>())) return std::nullopt;
      if (v.is_number_integer()) {
        auto n = e->second.by_number.find(v.get<int64_t>());
        if (n != e->second.by_number.end()) {
          v = n->second;
          return std::nullopt;
        }
      }
      return "Invalid value at '" + at + "' (type.googleapis.com/" + f.type + "), " + v.dump();
    }
    case 's': {
      bool ok = true;
      if (IsIntegral(f.type)) {
        ok = v.is_number_integer() ||
             (v.is_string() && !v.get<std::string>().empty() &&
              v.get<std::string>().find_first_not_of("-0123456789") == std::string::npos);
      } else if (f.type == "bool") {
        ok = v.is_boolean();
      } else if (f.type == "double" || f.type == "float") {
        ok = v.is_number();
      } else if (f.type == "string" || f.type == "bytes") {
        ok = v.is_string();
      }
      if (ok) return std::nullopt;
      std::string upper = f.type;
      for (auto& c : upper) c = static_cast<char>(std::toupper(c));
      return "Invalid value at '" + at + "' (TYPE_" + upper + "), " + v.dump();
    }
    default:
      return std::nullopt;
  }
}

}  // namespace tpu::sim
