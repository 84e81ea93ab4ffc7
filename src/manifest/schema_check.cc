// SchemaChecker: the YAML tree → valijson (through yaml_schema_adapter.h), and
// valijson's errors → DocErrors with positions and messages written from the schema.
#include "manifest/schema_check.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "manifest/yaml_schema_adapter.h"

namespace tpu::manifest {
namespace {

using json = nlohmann::json;

struct CompiledSchema {
  json source;
  valijson::Schema schema;
};

// Compiled once: the schemas are immutable, and valijson only reads them.
const CompiledSchema& Compiled(Kind kind) {
  static const std::vector<std::unique_ptr<CompiledSchema>> kCompiled = [] {
    std::vector<std::unique_ptr<CompiledSchema>> out;
    for (const char* file : {"tpunodepool_v1alpha1.json", "tpunodegroup_v1alpha1.json", "cluster_v1alpha1.json"}) {
      auto c = std::make_unique<CompiledSchema>();
      for (const auto& e : EmbeddedSchemas())
        if (std::string(e.file) == file) c->source = json::parse(e.json);
      valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
      valijson::adapters::NlohmannJsonAdapter adapter(c->source);
      parser.populateSchema(adapter, c->schema);
      out.push_back(std::move(c));
    }
    return out;
  }();
  return *kCompiled[static_cast<int>(kind)];
}

// What a YAML value is, for "got ..." in messages.
std::string Describe(const YamlNode& n) {
  switch (n.type) {
    case YamlNode::Type::kNull: return "null";
    case YamlNode::Type::kBool: return n.boolean ? "boolean true" : "boolean false";
    case YamlNode::Type::kInt: return "integer " + n.text;
    case YamlNode::Type::kFloat: return "number " + n.text;
    case YamlNode::Type::kString: return "string \"" + n.text + "\"";
    case YamlNode::Type::kSeq: return "a list";
    case YamlNode::Type::kMap: return "a map";
  }
  return "";
}

std::string JsonTypeName(const std::string& t) {
  if (t == "object") return "a map";
  if (t == "array") return "a list";
  if (t == "integer") return "an integer";
  if (t == "boolean") return "a boolean";
  if (t == "string") return "a string";
  if (t == "number") return "a number";
  return t;
}

const json* Deref(const json& root, const json* s) {
  for (int hops = 0; s && s->is_object() && s->contains("$ref") && hops < 8; ++hops) {
    std::string ref = (*s)["$ref"].get<std::string>();
    const std::string prefix = "#/definitions/";
    if (ref.rfind(prefix, 0) != 0) return nullptr;
    auto defs = root.find("definitions");
    if (defs == root.end()) return nullptr;
    auto it = defs->find(ref.substr(prefix.size()));
    s = it == defs->end() ? nullptr : &*it;
  }
  return s;
}

// The subschema that applies to a child of `s`: properties[key], or
// additionalProperties when it is a schema, or items.
const json* Child(const json& root, const json* s, const std::string& key, bool index) {
  s = Deref(root, s);
  if (!s || !s->is_object()) return nullptr;
  if (index) {
    auto it = s->find("items");
    return it == s->end() ? nullptr : Deref(root, &*it);
  }
  auto props = s->find("properties");
  if (props != s->end()) {
    auto it = props->find(key);
    if (it != props->end()) return Deref(root, &*it);
  }
  auto ap = s->find("additionalProperties");
  if (ap != s->end() && ap->is_object()) return Deref(root, &*ap);
  return nullptr;
}

// A location in the document reached by a valijson context path.
struct Located {
  const YamlNode* node = nullptr;  // the value
  const YamlNode* key = nullptr;   // its key, when the value sits in a map
  std::string field;
  const json* schema = nullptr;
};

Located Walk(const YamlDocument& doc, const json& root, const std::vector<std::string>& context) {
  Located at{&doc.root(), nullptr, "", &root};
  for (size_t i = 1; i < context.size() && at.node; ++i) {  // context[0] is "<root>"
    std::string part = context[i];
    if (part.size() >= 2 && part.front() == '[' && part.back() == ']') part = part.substr(1, part.size() - 2);
    if (at.node->type == YamlNode::Type::kSeq) {
      size_t idx = std::strtoul(part.c_str(), nullptr, 10);
      if (idx >= at.node->count) break;
      at.schema = Child(root, at.schema, part, true);
      at.field = IndexPath(at.field, idx);
      at.key = nullptr;
      at.node = &doc.item(*at.node, idx);
    } else {
      const YamlNode* key = doc.FindKey(*at.node, part);
      if (!key) break;
      at.schema = Child(root, at.schema, part, false);
      at.field = FieldPath(at.field, part);
      at.key = key;
      at.node = doc.Find(*at.node, part);
    }
  }
  return at;
}

// The property name valijson quotes at the end of a message, after `marker`:
// "Missing required property 'x'.", "... constraints: 'x'."
std::string Quoted(const std::string& description, const std::string& marker) {
  auto open = description.find(marker);
  auto close = description.rfind('\'');
  if (open == std::string::npos) return "";
  open += marker.size();
  if (close < open) return "";
  return description.substr(open, close - open);
}

std::string Number(const json& v) {
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return v.dump();
}

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

constexpr size_t kMaxErrorsPerDocument = 100;

// What a value that breaks constraint `d` of schema `s` should have been, for
// a person: "expected one of spot, onDemand; got \"sopt\"".
std::string ValueMessage(const std::string& d, const json* s, const YamlNode& node) {
  auto get = [&](const char* k) -> const json* {
    if (!s || !s->is_object()) return nullptr;
    auto it = s->find(k);
    return it == s->end() ? nullptr : &*it;
  };
  if (StartsWith(d, "Value type not permitted")) {
    const json* t = get("type");
    std::string want = t && t->is_string() ? JsonTypeName(t->get<std::string>()) : "another type";
    return "expected " + want + ", got " + Describe(node);
  }
  if (StartsWith(d, "Failed to match against any enum values")) {
    std::string values;
    if (const json* en = get("enum"))
      for (const auto& v : *en) values += (values.empty() ? "" : ", ") + (v.is_string() ? v.get<std::string>() : v.dump());
    return "expected one of " + values + "; got " + Describe(node);
  }
  if (StartsWith(d, "Failed to match expected value set by 'const'")) {
    const json* c = get("const");
    return "expected " + (c ? c->dump() : std::string("a fixed value")) + ", got " + Describe(node);
  }
  if (StartsWith(d, "Failed to match regex")) {
    const json* desc = get("description");
    const json* pat = get("pattern");
    std::string want = desc ? desc->get<std::string>()
                            : "a string matching " + (pat ? pat->get<std::string>() : std::string("the pattern"));
    return "expected " + want + ", got " + Describe(node);
  }
  if (StartsWith(d, "Expected number greater than or equal to") || StartsWith(d, "Expected number less than or equal to")) {
    const json* lo = get("minimum");
    const json* hi = get("maximum");
    std::string range = lo && hi ? "between " + Number(*lo) + " and " + Number(*hi)
                        : lo     ? "≥ " + Number(*lo)
                        : hi     ? "≤ " + Number(*hi)
                                 : "in range";
    return "expected an integer " + range + ", got " + node.text;
  }
  if (StartsWith(d, "String should be no more than")) {
    const json* max = get("maxLength");
    return "expected at most " + (max ? Number(*max) : std::string("fewer")) + " characters, got " +
                   std::to_string(node.text.size());
  }
  if (StartsWith(d, "String should be no fewer than")) {
    return "expected a non-empty string";
  }
  return d;  // a constraint we do not phrase ourselves
}

}  // namespace

struct SchemaChecker::Impl {
  valijson::Validator validator;
  // Turns one valijson error into a DocError, or returns false for the
  // follow-on errors valijson reports for every enclosing object and list.
  bool Translate(const json& root, const YamlDocument& doc, const valijson::ValidationResults::Error& e,
                 DocError* out);
};

bool SchemaChecker::Impl::Translate(const json& root, const YamlDocument& doc,
                                    const valijson::ValidationResults::Error& e, DocError* out) {
  const std::string& d = e.description;
  if (StartsWith(d, "Failed to validate")) return false;
  Located at = Walk(doc, root, e.context);
  if (!at.node) return false;
  const YamlNode* mark = at.key ? at.key : at.node;
  out->line = mark->line;
  out->column = mark->column;
  out->field = at.field;
  const json* s = at.schema;
  auto get = [&](const char* k) -> const json* {
    if (!s || !s->is_object()) return nullptr;
    auto it = s->find(k);
    return it == s->end() ? nullptr : &*it;
  };
  if (StartsWith(d, "Missing required property")) {
    std::string name = Quoted(d, "property '");
    out->field = FieldPath(at.field, name);
    out->message = "required field is missing";
    const json* sub = Child(root, s, name, false);
    if (sub && sub->contains("description"))
      out->message += " (expected " + (*sub)["description"].get<std::string>() + ")";
    return true;
  }
  if (StartsWith(d, "Object contains a property that could not be validated")) {
    std::string name = Quoted(d, "constraints: '");
    out->field = FieldPath(at.field, name);
    if (const YamlNode* key = doc.FindKey(*at.node, name)) {
      out->line = key->line;
      out->column = key->column;
    }
    std::string known;
    if (const json* props = get("properties"))
      for (auto it = props->begin(); it != props->end(); ++it) known += (known.empty() ? "" : ", ") + it.key();
    out->message = "unknown field (expected one of: " + known + ")";
    return true;
  }
  out->message = ValueMessage(d, s, *at.node);
  return true;
}

SchemaChecker::SchemaChecker() : impl_(std::make_unique<Impl>()) {}
SchemaChecker::~SchemaChecker() = default;

void SchemaChecker::Check(Kind kind, const YamlDocument& doc, std::vector<DocError>* errors,
                          std::set<std::string>* bad_fields) {
  const CompiledSchema& c = Compiled(kind);
  const YamlSchemaView view(doc);
  const valijson::adapters::YamlTreeAdapter adapter({&view, &doc.root()});
  valijson::ValidationResults results;
  if (impl_->validator.validate(c.schema, adapter, &results)) return;
  valijson::ValidationResults::Error e;
  // Each translation searches the document; bound the work a hostile file
  // with thousands of bad values can cause (the file is broken either way).
  size_t reported = 0;
  while (results.popError(e) && reported < kMaxErrorsPerDocument) {
    DocError out;
    if (!impl_->Translate(c.source, doc, e, &out)) continue;
    bad_fields->insert(out.field);
    errors->push_back(std::move(out));
    ++reported;
  }
  if (reported == kMaxErrorsPerDocument && results.numErrors() > 0)
    errors->push_back({doc.line, 1, "", "more schema errors in this document not shown"});
}

}  // namespace tpu::manifest
