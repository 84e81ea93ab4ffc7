// YAML documents as a small, read-only tree that remembers where each node was.
//
// Built from libyaml's event parser rather than a library's node tree: we keep
// line and column on every node (errors must name them), resolve plain scalars
// the YAML 1.2 core way (quoted "8" stays a string, plain 8 is an integer), and
// bound aliases: a node graph that shares aliased nodes makes a "billion
// laughs" file small in memory but explodes for any walker that expands it, so
// ParseYaml counts the nodes aliases would expand to and stops the file once
// they pass a limit. Nodes of a document live in one arena; an alias is a
// second reference to the anchored node, never a copy. libyaml rather than
// yaml-cpp for the events: a cold load is mostly YAML scanning, and with
// libyaml's scanner it takes half the CPU (docs/architecture.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tpu::manifest {

struct YamlNode {
  enum class Type : uint8_t { kNull, kBool, kInt, kFloat, kString, kSeq, kMap };
  Type type = Type::kNull;
  int line = 0;    // 1-based
  int column = 0;  // 1-based
  // Scalars: the text as written (after YAML unescaping).
  std::string text;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0;
  // Containers: children [first, first+count) in YamlDocument::kids. Maps
  // store key, value, key, value...; keys are string nodes with their own marks.
  uint32_t first = 0;
  uint32_t count = 0;

  bool IsScalar() const { return type != Type::kSeq && type != Type::kMap; }
};

// One document of a (possibly multi-document) file.
class YamlDocument {
 public:
  const YamlNode& root() const { return nodes[root_index]; }
  const YamlNode& node(uint32_t i) const { return nodes[i]; }
  // Container children, see YamlNode::first.
  size_t size(const YamlNode& n) const { return n.type == YamlNode::Type::kMap ? n.count / 2 : n.count; }
  const YamlNode& item(const YamlNode& seq, size_t i) const { return nodes[kids[seq.first + i]]; }
  const YamlNode& key(const YamlNode& map, size_t i) const { return nodes[kids[map.first + 2 * i]]; }
  const YamlNode& value(const YamlNode& map, size_t i) const { return nodes[kids[map.first + 2 * i + 1]]; }
  // The value under `name` in a map, or nullptr (also when `map` is no map).
  const YamlNode* Find(const YamlNode& map, std::string_view name) const;
  // The key node whose value is `name`, for errors about a field's key.
  const YamlNode* FindKey(const YamlNode& map, std::string_view name) const;

  std::vector<YamlNode> nodes;
  std::vector<uint32_t> kids;
  uint32_t root_index = 0;
  int line = 1;  // where the document starts, for errors about the whole document
};

// A YAML problem with its 1-based position.
struct YamlError {
  int line = 0;
  int column = 0;
  std::string message;
};

struct YamlFile {
  std::vector<YamlDocument> documents;  // empty documents (a stray `---`) are dropped
  std::vector<YamlError> errors;        // non-empty: the file is broken; documents
                                        // parsed before the error are kept
};

struct YamlLimits {
  // Nodes that aliases may add to one document once expanded. Real manifests
  // use a handful of aliases; "billion laughs" needs millions.
  uint64_t max_alias_expansion = 10000;
  // Nesting depth of maps and lists. Manifests nest about six deep; every
  // walker after the parser (JSON conversion, valijson) recurses per level.
  size_t max_depth = 64;
};

// Checks that `bytes` are UTF-8 and parses them. Never throws.
YamlFile ParseYaml(std::string_view bytes, const YamlLimits& limits = {});

// The first invalid UTF-8 byte's offset, or npos when `bytes` are valid UTF-8
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t FindInvalidUtf8(std::string_view bytes);

// 1-based line and column (in characters) of byte `offset`.
void LineColumnOf(std::string_view bytes, size_t offset, int* line, int* column);

}  // namespace tpu::manifest
