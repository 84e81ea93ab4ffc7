// ParseYaml: libyaml events → YamlDocument arenas, with scalar resolution,
// duplicate-key and alias checks. See yaml_tree.h for why not YAML::Load.
#include "manifest/yaml_tree.h"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <yaml.h>

namespace tpu::manifest {
namespace {

constexpr uint64_t kOpen = UINT64_MAX;  // expanded size of a container not yet closed

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX / 2 - b ? UINT64_MAX / 2 : a + b; }

bool IsPlainNull(const std::string& s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }

// YAML 1.2 core schema for plain scalars: null, bool, int, float, else string.
void Resolve(YamlNode& n) {
  const std::string& s = n.text;
  using T = YamlNode::Type;
  if (IsPlainNull(s)) { n.type = T::kNull; return; }
  // Most scalars (every key) are words that no rule below can match: only
  // these first characters start a bool, a number, .inf or .nan.
  if (!std::strchr("tTfF0123456789-+.", s[0])) { n.type = T::kString; return; }
  if (s == "true" || s == "True" || s == "TRUE") { n.type = T::kBool; n.boolean = true; return; }
  if (s == "false" || s == "False" || s == "FALSE") { n.type = T::kBool; return; }
  const char* b = s.data();
  const char* e = b + s.size();
  char c = s[0];
  if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.') {
    const char* p = (c == '+') ? b + 1 : b;
    int base = 10;
    if (e - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'o')) {
      base = p[1] == 'x' ? 16 : 8;
      p += 2;
    }
    int64_t v = 0;
    auto [q, ec] = std::from_chars(p, e, v, base);
    if (ec == std::errc() && q == e && p != e) { n.type = T::kInt; n.integer = v; n.number = double(v); return; }
    if (base == 10) {
      double d = 0;
      auto [q2, ec2] = std::from_chars(p, e, d);
      if (ec2 == std::errc() && q2 == e && s.find_first_of("0123456789") != std::string::npos &&
          s.find_first_of("nNiI") == std::string::npos) {
        n.type = T::kFloat; n.number = d; return;
      }
    }
  }
  if (s == ".inf" || s == "+.inf" || s == "-.inf" || s == ".nan" || s == ".Inf" || s == ".NaN") {
    n.type = T::kFloat;
    n.number = s == ".nan" || s == ".NaN" ? 0.0 : (s[0] == '-' ? -1e308 * 10 : 1e308 * 10);
    return;
  }
  n.type = T::kString;
}

// One document's events → its YamlDocument arena. Each On* returns false and
// sets `error` when the file must stop there.
class Builder {
 public:
  Builder(YamlFile* out, const YamlLimits& limits) : out_(out), limits_(limits) {}

  YamlError error;

  void OnDocumentStart(const yaml_mark_t& mark) {
    doc_ = YamlDocument();
    // Documents of one file tend to be alike: start at the last one's size.
    doc_.nodes.reserve(last_nodes_);
    doc_.kids.reserve(last_nodes_);
    sizes_.reserve(last_nodes_);
    doc_.line = static_cast<int>(mark.line) + 1;
    sizes_.clear();
    anchors_.clear();
    alias_nodes_ = 0;
    has_root_ = false;
    stack_.clear();
  }
  void OnDocumentEnd() {
    last_nodes_ = doc_.nodes.size();
    if (has_root_ && doc_.root().type != YamlNode::Type::kNull) out_->documents.push_back(std::move(doc_));
  }
  bool OnAlias(const yaml_mark_t& mark, const char* anchor) {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) return Stop(mark, "alias to an unknown anchor");
    uint32_t target = it->second;
    if (sizes_[target] == kOpen)
      return Stop(mark, "alias refers to a node that contains it (recursive YAML is not allowed)");
    alias_nodes_ = SaturatingAdd(alias_nodes_, sizes_[target]);
    if (alias_nodes_ > limits_.max_alias_expansion)
      return Stop(mark, "aliases expand this document by more than " + std::to_string(limits_.max_alias_expansion) +
                            " nodes (a YAML alias bomb?); expected aliases to be few and small");
    Add(target, sizes_[target]);
    return true;
  }
  void OnScalar(const yaml_event_t& e) {
    const auto& s = e.data.scalar;
    uint32_t i = NewNode(e.start_mark, s.anchor, YamlNode::Type::kString);
    YamlNode& n = doc_.nodes[i];
    n.text.assign(reinterpret_cast<const char*>(s.value), s.length);
    // Untagged: only plain scalars resolve (a quoted "8" stays a string).
    // Tagged: "!" and !!str keep the text; other tags resolve like plain.
    const char* tag = reinterpret_cast<const char*>(s.tag);
    bool resolve = tag ? std::strcmp(tag, "!") != 0 && std::strcmp(tag, "tag:yaml.org,2002:str") != 0
                       : s.style == YAML_PLAIN_SCALAR_STYLE;
    if (resolve) Resolve(n);
    if (n.type == YamlNode::Type::kNull) n.text.clear();  // `~` and `null` read as no text
    Add(i, 1);
  }
  bool OnContainerStart(const yaml_mark_t& mark, const yaml_char_t* anchor, YamlNode::Type type) {
    uint32_t i = NewNode(mark, anchor, type);
    if (stack_.size() >= limits_.max_depth)
      return Stop(mark, "maps and lists nested deeper than " + std::to_string(limits_.max_depth) +
                            " levels; expected a manifest");
    stack_.push_back({i, 1});
    if (kids_.size() < stack_.size()) kids_.emplace_back();
    kids_[stack_.size() - 1].clear();
    return true;
  }
  void OnSequenceEnd() { Close(); }
  void OnMappingEnd() {
    uint32_t i = stack_.back().node;
    Close();
    CheckKeys(doc_.nodes[i]);
  }

 private:
  struct Frame {
    uint32_t node;
    uint64_t size;  // expanded nodes below, aliases counted in full
  };

  bool Stop(const yaml_mark_t& mark, std::string message) {
    error = {static_cast<int>(mark.line) + 1, static_cast<int>(mark.column) + 1, std::move(message)};
    return false;
  }

  uint32_t NewNode(const yaml_mark_t& mark, const yaml_char_t* anchor, YamlNode::Type type) {
    uint32_t i = static_cast<uint32_t>(doc_.nodes.size());
    YamlNode& n = doc_.nodes.emplace_back();
    n.type = type;
    n.line = static_cast<int>(mark.line) + 1;
    n.column = static_cast<int>(mark.column) + 1;
    sizes_.push_back(type == YamlNode::Type::kSeq || type == YamlNode::Type::kMap ? kOpen : 1);
    if (anchor) anchors_[reinterpret_cast<const char*>(anchor)] = i;
    return i;
  }

  // Attaches node `i` (of expanded size `size`) to the open container or as the root.
  void Add(uint32_t i, uint64_t size) {
    if (stack_.empty()) {
      doc_.root_index = i;
      has_root_ = true;
      return;
    }
    kids_[stack_.size() - 1].push_back(i);
    stack_.back().size = SaturatingAdd(stack_.back().size, size);
  }

  void Close() {
    Frame f = stack_.back();
    std::vector<uint32_t>& kids = kids_[stack_.size() - 1];
    YamlNode& n = doc_.nodes[f.node];
    n.first = static_cast<uint32_t>(doc_.kids.size());
    n.count = static_cast<uint32_t>(kids.size());
    doc_.kids.insert(doc_.kids.end(), kids.begin(), kids.end());
    sizes_[f.node] = f.size;
    stack_.pop_back();
    Add(f.node, f.size);
  }

  // Keys must be scalars and unique; both are errors, not fatal to the parse.
  void CheckKeys(const YamlNode& map) {
    size_t n = doc_.size(map);
    // A manifest's maps have a few keys: comparing each with the ones before
    // it costs less than hashing them; a large map gets the set.
    constexpr size_t kScanMax = 16;
    std::unordered_set<std::string_view> seen;
    auto repeated = [&](size_t k, const YamlNode& key) {
      if (n > kScanMax) return !seen.insert(key.text).second;
      for (size_t j = 0; j < k; ++j) {
        const YamlNode& before = doc_.key(map, j);
        if (before.IsScalar() && before.text == key.text) return true;
      }
      return false;
    };
    for (size_t k = 0; k < n; ++k) {
      const YamlNode& key = doc_.key(map, k);
      if (!key.IsScalar()) {
        out_->errors.push_back({key.line, key.column, "mapping keys must be plain strings"});
        continue;
      }
      if (repeated(k, key))
        out_->errors.push_back({key.line, key.column, "duplicate key \"" + key.text + "\""});
    }
  }

  YamlFile* out_;
  YamlLimits limits_;
  YamlDocument doc_;
  bool has_root_ = false;
  std::vector<uint64_t> sizes_;  // per node of doc_
  std::unordered_map<std::string, uint32_t> anchors_;
  uint64_t alias_nodes_ = 0;
  size_t last_nodes_ = 64;  // nodes of the previous document
  std::vector<Frame> stack_;
  std::vector<std::vector<uint32_t>> kids_;  // per depth, reused across containers
};

// Feeds one event to `b`; false when the file stops here (b.error says why).
bool Dispatch(const yaml_event_t& e, Builder& b) {
  using T = YamlNode::Type;
  switch (e.type) {
    case YAML_DOCUMENT_START_EVENT: b.OnDocumentStart(e.start_mark); return true;
    case YAML_DOCUMENT_END_EVENT: b.OnDocumentEnd(); return true;
    case YAML_ALIAS_EVENT: return b.OnAlias(e.start_mark, reinterpret_cast<const char*>(e.data.alias.anchor));
    case YAML_SCALAR_EVENT: b.OnScalar(e); return true;
    case YAML_SEQUENCE_START_EVENT: return b.OnContainerStart(e.start_mark, e.data.sequence_start.anchor, T::kSeq);
    case YAML_SEQUENCE_END_EVENT: b.OnSequenceEnd(); return true;
    case YAML_MAPPING_START_EVENT: return b.OnContainerStart(e.start_mark, e.data.mapping_start.anchor, T::kMap);
    case YAML_MAPPING_END_EVENT: b.OnMappingEnd(); return true;
    default: return true;  // stream start and end
  }
}

// libyaml's error as ours: the problem at its position, and what was being
// parsed where when that is elsewhere, e.g. "did not find expected ',' or ']'
// (while parsing a flow sequence at line 7, column 13)".
YamlError SyntaxError(const yaml_parser_t& p, std::string_view bytes) {
  YamlError e;
  size_t offset = p.problem_offset;
  if (p.error == YAML_READER_ERROR) {
    LineColumnOf(bytes, offset, &e.line, &e.column);
  } else {
    offset = p.problem_mark.index;
    e.line = static_cast<int>(p.problem_mark.line) + 1;
    e.column = static_cast<int>(p.problem_mark.column) + 1;
  }
  e.message = "YAML syntax error: ";
  // libyaml's words for a tab where a token should start do not say "tab".
  if (p.error == YAML_SCANNER_ERROR && offset < bytes.size() && bytes[offset] == '\t') {
    e.message += "found a tab that cannot start any token (YAML indents with spaces, not tabs)";
    return e;
  }
  e.message += p.problem ? p.problem : (p.error == YAML_MEMORY_ERROR ? "out of memory" : "unknown error");
  if (p.context) {
    e.message += std::string(" (") + p.context;
    if (p.error != YAML_READER_ERROR && p.context_mark.index != p.problem_mark.index)
      e.message += " at line " + std::to_string(p.context_mark.line + 1) + ", column " +
                   std::to_string(p.context_mark.column + 1);
    e.message += ")";
  }
  return e;
}

}  // namespace

const YamlNode* YamlDocument::Find(const YamlNode& map, std::string_view name) const {
  if (map.type != YamlNode::Type::kMap) return nullptr;
  for (size_t i = 0, n = size(map); i < n; ++i)
    if (key(map, i).text == name) return &value(map, i);
  return nullptr;
}

const YamlNode* YamlDocument::FindKey(const YamlNode& map, std::string_view name) const {
  if (map.type != YamlNode::Type::kMap) return nullptr;
  for (size_t i = 0, n = size(map); i < n; ++i)
    if (key(map, i).text == name) return &key(map, i);
  return nullptr;
}

size_t FindInvalidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) { ++i; continue; }
    int len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
    else return i;
    if (i + len > n) return i;
    for (int k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
      return i;
    i += len;
  }
  return std::string_view::npos;
}

void LineColumnOf(std::string_view s, size_t offset, int* line, int* column) {
  *line = 1;
  *column = 1;
  for (size_t i = 0; i < offset && i < s.size(); ++i) {
    if (s[i] == '\n') {
      ++*line;
      *column = 1;
    } else if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      ++*column;
    }
  }
}

YamlFile ParseYaml(std::string_view bytes, const YamlLimits& limits) {
  YamlFile out;
  size_t bad = FindInvalidUtf8(bytes);
  if (bad != std::string_view::npos) {
    YamlError e;
    LineColumnOf(bytes, bad, &e.line, &e.column);
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(bytes[bad]));
    e.message = std::string("invalid UTF-8 (byte ") + hex + "); expected a UTF-8 text file";
    out.errors.push_back(std::move(e));
    return out;
  }
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) {
    out.errors.push_back({1, 1, "YAML syntax error: out of memory"});
    return out;
  }
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  Builder builder(&out, limits);
  for (;;) {
    yaml_event_t event;
    if (!yaml_parser_parse(&parser, &event)) {
      out.errors.push_back(SyntaxError(parser, bytes));
      break;
    }
    bool go_on = Dispatch(event, builder);
    bool end = event.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&event);
    if (!go_on) {
      out.errors.push_back(std::move(builder.error));
      break;
    }
    if (end) break;
  }
  yaml_parser_delete(&parser);
  return out;
}

}  // namespace tpu::manifest
