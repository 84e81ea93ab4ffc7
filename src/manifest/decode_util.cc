// DocReader and the label/annotation checks shared by every kind.
#include "manifest/decode_util.h"

#include "manifest/names.h"

namespace tpu::manifest {

const YamlNode* DocReader::Node(const YamlNode* parent, const char* key) const {
  return parent ? doc_.Find(*parent, key) : nullptr;
}

const YamlNode* DocReader::Map(const YamlNode* parent, const char* key) const {
  const YamlNode* n = Node(parent, key);
  return n && n->type == YamlNode::Type::kMap ? n : nullptr;
}

std::optional<std::string> DocReader::Str(const YamlNode* parent, const char* key) const {
  const YamlNode* n = Node(parent, key);
  if (!n || n->type != YamlNode::Type::kString) return std::nullopt;
  return n->text;
}

std::optional<int> DocReader::Int(const YamlNode* parent, const char* key) const {
  const YamlNode* n = Node(parent, key);
  if (!n || n->type != YamlNode::Type::kInt || n->integer < INT32_MIN || n->integer > INT32_MAX)
    return std::nullopt;
  return static_cast<int>(n->integer);
}

std::optional<bool> DocReader::Bool(const YamlNode* parent, const char* key) const {
  const YamlNode* n = Node(parent, key);
  if (!n || n->type != YamlNode::Type::kBool) return std::nullopt;
  return n->boolean;
}

std::optional<StringMap> DocReader::Strings(const YamlNode* parent, const char* key) const {
  const YamlNode* n = Map(parent, key);
  if (!n) return std::nullopt;
  StringMap m;
  for (size_t i = 0, e = doc_.size(*n); i < e; ++i) {
    const YamlNode& v = doc_.value(*n, i);
    if (v.type == YamlNode::Type::kString) m[doc_.key(*n, i).text] = v.text;
  }
  return m;
}

std::optional<std::vector<std::string>> DocReader::List(const YamlNode* parent, const char* key) const {
  const YamlNode* n = Node(parent, key);
  if (!n || n->type != YamlNode::Type::kSeq) return std::nullopt;
  std::vector<std::string> out;
  for (size_t i = 0; i < n->count; ++i) {
    const YamlNode& v = doc_.item(*n, i);
    if (v.type == YamlNode::Type::kString) out.push_back(v.text);
  }
  return out;
}

void DocReader::ErrorAt(const YamlNode& at, std::string field, std::string message) {
  failed_ = true;
  errors_->push_back({at.line, at.column, std::move(field), std::move(message)});
}

void DocReader::Error(const YamlNode* parent, const char* key, std::string field, std::string message) {
  const YamlNode* at = parent ? doc_.FindKey(*parent, key) : nullptr;
  ErrorAt(at ? *at : (parent ? *parent : doc_.root()), std::move(field), std::move(message));
}

namespace {

// Each key and value of the map at `field` checked by `check_key` and
// `check_value` ("" when fine, else why not); `what` names them in errors.
void CheckMap(DocReader& r, const YamlNode* map, const std::string& field, const char* what,
              std::string (*check_key)(std::string_view), std::string (*check_value)(std::string_view)) {
  if (!map || map->type != YamlNode::Type::kMap) return;
  const YamlDocument& d = r.doc();
  for (size_t i = 0, e = d.size(*map); i < e; ++i) {
    const YamlNode& k = d.key(*map, i);
    const YamlNode& v = d.value(*map, i);
    std::string f = FieldPath(field, k.text);
    if (std::string why = check_key(k.text); !why.empty())
      r.ErrorAt(k, f, std::string("invalid ") + what + " key \"" + k.text + "\": " + why);
    if (v.type == YamlNode::Type::kString && !r.Bad(f))
      if (std::string why = check_value(v.text); !why.empty())
        r.ErrorAt(v, f, std::string("invalid ") + what + " value \"" + v.text + "\": " + why);
  }
}

}  // namespace

void CheckLabels(DocReader& r, const YamlNode* map, const std::string& field) {
  CheckMap(r, map, field, "label", CheckLabelKey, CheckLabelValue);
}

void CheckResourceLabels(DocReader& r, const YamlNode* map, const std::string& field) {
  CheckMap(r, map, field, "resource label", CheckResourceLabelKey, CheckResourceLabelValue);
}

Annotations ReadAnnotations(DocReader& r, const YamlNode* metadata) {
  Annotations a;
  const YamlNode* map = r.Map(metadata, "annotations");
  if (!map) return a;
  const YamlDocument& d = r.doc();
  const std::string prefix = "tpu-provisioner.io/";
  for (size_t i = 0, e = d.size(*map); i < e; ++i) {
    const YamlNode& k = d.key(*map, i);
    const YamlNode& v = d.value(*map, i);
    std::string f = FieldPath("metadata.annotations", k.text);
    if (std::string why = CheckLabelKey(k.text); !why.empty()) {
      r.ErrorAt(k, f, "invalid annotation key \"" + k.text + "\": " + why);
      continue;
    }
    if (k.text.rfind(prefix, 0) != 0 || v.type != YamlNode::Type::kString) continue;
    std::string name = k.text.substr(prefix.size());
    auto boolean = [&](bool* out) {
      if (v.text == "true") *out = true;
      else if (v.text != "false") r.ErrorAt(v, f, "expected \"true\" or \"false\", got \"" + v.text + "\"");
    };
    if (name == "deletion-policy") {
      if (v.text == "abandon") a.abandon = true;
      else if (v.text != "delete") r.ErrorAt(v, f, "expected \"abandon\" or \"delete\", got \"" + v.text + "\"");
    } else if (name == "prevent-destroy") {
      boolean(&a.prevent_destroy);
    } else if (name == "adopt") {
      boolean(&a.adopt);
    } else {
      r.ErrorAt(k, f, "unknown annotation (expected tpu-provisioner.io/deletion-policy, "
                      "tpu-provisioner.io/prevent-destroy or tpu-provisioner.io/adopt)");
    }
  }
  return a;
}

}  // namespace tpu::manifest
