// A valijson adapter over YamlDocument, so the schema check reads our YAML
// tree in place instead of a JSON copy of it (building and freeing that copy
// was a fifth of the check's CPU on a cold load).
//
// It shows valijson exactly what the JSON copy showed (nlohmann::json, see
// YamlToJson): a map's members in key order (std::map's, bytewise), a key
// written twice once, with its last value, integers and floats as JSON
// integers and numbers. valijson reports unknown fields and walks
// additionalProperties in member order, so the order keeps its errors, and
// their order, the same.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/internal/adapter.hpp>
#include <valijson/internal/basic_adapter.hpp>
#include <valijson/internal/frozen_value.hpp>

#include "manifest/yaml_tree.h"

namespace tpu::manifest {

// The JSON value of node `n` of `doc` (a map key written twice keeps its last value).
nlohmann::json YamlToJson(const YamlDocument& doc, const YamlNode& n);

// Every map of one document with its members in key order, built once per
// check. REQUIRES: `doc` outlives it and the adapters made from it.
class YamlSchemaView {
 public:
  explicit YamlSchemaView(const YamlDocument& doc);
  YamlSchemaView(const YamlSchemaView&) = delete;
  YamlSchemaView& operator=(const YamlSchemaView&) = delete;

  const YamlDocument& doc() const { return doc_; }
  // Map `m`'s members in key order, each its index among m's pairs; a key
  // written twice appears once, as its last pair.
  const uint32_t* members(const YamlNode& m) const { return order_.data() + span(m).first; }
  size_t member_count(const YamlNode& m) const { return span(m).second; }

 private:
  std::pair<uint32_t, uint32_t> span(const YamlNode& m) const;  // {offset in order_, count}

  const YamlDocument& doc_;
  std::vector<uint32_t> order_;
  std::vector<std::pair<uint32_t, uint32_t>> spans_;  // by node index, maps only
};

}  // namespace tpu::manifest

namespace valijson::adapters {

class YamlTreeAdapter;
class YamlTreeArrayIterator;
class YamlTreeMemberIterator;
using YamlTreeMember = std::pair<std::string, YamlTreeAdapter>;

// What every adapter points at: the view (for map order) and one node.
struct YamlTreeRef {
  const tpu::manifest::YamlSchemaView* view = nullptr;
  const tpu::manifest::YamlNode* node = nullptr;
};
// An empty list or map of no document: what valijson's default-constructed
// adapters, lists and maps stand for (empty, as in its other adapters).
YamlTreeRef EmptyYamlTree(tpu::manifest::YamlNode::Type type);

class YamlTreeArray {
 public:
  using const_iterator = YamlTreeArrayIterator;
  using iterator = YamlTreeArrayIterator;
  YamlTreeArray() : ref_(EmptyYamlTree(tpu::manifest::YamlNode::Type::kSeq)) {}
  explicit YamlTreeArray(YamlTreeRef ref) : ref_(ref) {}
  YamlTreeArrayIterator begin() const;
  YamlTreeArrayIterator end() const;
  size_t size() const { return ref_.node->count; }

 private:
  YamlTreeRef ref_;
};

class YamlTreeObject {
 public:
  using const_iterator = YamlTreeMemberIterator;
  using iterator = YamlTreeMemberIterator;
  YamlTreeObject() : ref_(EmptyYamlTree(tpu::manifest::YamlNode::Type::kMap)) {}
  explicit YamlTreeObject(YamlTreeRef ref) : ref_(ref) {}
  YamlTreeMemberIterator begin() const;
  YamlTreeMemberIterator end() const;
  YamlTreeMemberIterator find(const std::string& name) const;
  size_t size() const { return ref_.view->member_count(*ref_.node); }

 private:
  YamlTreeRef ref_;
};

// A value valijson keeps (enum and const compare against frozen schema
// values; it freezes instance values only for uniqueItems): a JSON copy.
class YamlTreeFrozenValue : public FrozenValue {
 public:
  explicit YamlTreeFrozenValue(nlohmann::json value) : value_(std::move(value)) {}
  FrozenValue* clone() const override { return new YamlTreeFrozenValue(value_); }
  bool equalTo(const Adapter& other, bool strict) const override {
    return NlohmannJsonAdapter(value_).equalTo(other, strict);
  }

 private:
  nlohmann::json value_;
};

class YamlTreeValue {
 public:
  using Type = tpu::manifest::YamlNode::Type;
  YamlTreeValue() : ref_(EmptyYamlTree(Type::kMap)) {}
  explicit YamlTreeValue(YamlTreeRef ref) : ref_(ref) {}

  FrozenValue* freeze() const {
    return new YamlTreeFrozenValue(tpu::manifest::YamlToJson(ref_.view->doc(), *ref_.node));
  }
  opt::optional<YamlTreeArray> getArrayOptional() const {
    if (isArray()) return opt::make_optional(YamlTreeArray(ref_));
    return {};
  }
  bool getArraySize(size_t& result) const {
    if (!isArray()) return false;
    result = ref_.node->count;
    return true;
  }
  bool getBool(bool& result) const {
    if (!isBool()) return false;
    result = ref_.node->boolean;
    return true;
  }
  bool getDouble(double& result) const {
    if (!isDouble()) return false;
    result = ref_.node->number;
    return true;
  }
  bool getInteger(int64_t& result) const {
    if (!isInteger()) return false;
    result = ref_.node->integer;
    return true;
  }
  opt::optional<YamlTreeObject> getObjectOptional() const {
    if (isObject()) return opt::make_optional(YamlTreeObject(ref_));
    return {};
  }
  bool getObjectSize(size_t& result) const {
    if (!isObject()) return false;
    result = ref_.view->member_count(*ref_.node);
    return true;
  }
  bool getString(std::string& result) const {
    if (!isString()) return false;
    result = ref_.node->text;
    return true;
  }
  static bool hasStrictTypes() { return true; }
  bool isArray() const { return ref_.node->type == Type::kSeq; }
  bool isBool() const { return ref_.node->type == Type::kBool; }
  bool isDouble() const { return ref_.node->type == Type::kFloat; }
  bool isInteger() const { return ref_.node->type == Type::kInt; }
  bool isNull() const { return ref_.node->type == Type::kNull; }
  bool isNumber() const { return isInteger() || isDouble(); }
  bool isObject() const { return ref_.node->type == Type::kMap; }
  bool isString() const { return ref_.node->type == Type::kString; }

 private:
  YamlTreeRef ref_;
};

class YamlTreeAdapter
    : public BasicAdapter<YamlTreeAdapter, YamlTreeArray, YamlTreeMember, YamlTreeObject, YamlTreeValue> {
 public:
  YamlTreeAdapter() : BasicAdapter() {}
  explicit YamlTreeAdapter(YamlTreeRef ref) : BasicAdapter(YamlTreeValue(ref)) {}
};

class YamlTreeArrayIterator {
 public:
  using iterator_category = std::bidirectional_iterator_tag;
  using value_type = YamlTreeAdapter;
  using difference_type = YamlTreeAdapter;
  using pointer = YamlTreeAdapter*;
  using reference = YamlTreeAdapter&;

  YamlTreeArrayIterator(YamlTreeRef seq, size_t i) : seq_(seq), i_(i) {}
  YamlTreeAdapter operator*() const { return YamlTreeAdapter({seq_.view, &seq_.view->doc().item(*seq_.node, i_)}); }
  DerefProxy<YamlTreeAdapter> operator->() const { return DerefProxy<YamlTreeAdapter>(**this); }
  bool operator==(const YamlTreeArrayIterator& o) const { return i_ == o.i_; }
  bool operator!=(const YamlTreeArrayIterator& o) const { return i_ != o.i_; }
  const YamlTreeArrayIterator& operator++() {
    ++i_;
    return *this;
  }
  YamlTreeArrayIterator operator++(int) {
    YamlTreeArrayIterator pre = *this;
    ++i_;
    return pre;
  }
  const YamlTreeArrayIterator& operator--() {
    --i_;
    return *this;
  }
  void advance(std::ptrdiff_t n) { i_ = static_cast<size_t>(static_cast<std::ptrdiff_t>(i_) + n); }

 private:
  YamlTreeRef seq_;
  size_t i_;
};

class YamlTreeMemberIterator {
 public:
  using iterator_category = std::bidirectional_iterator_tag;
  using value_type = YamlTreeMember;
  using difference_type = YamlTreeMember;
  using pointer = YamlTreeMember*;
  using reference = YamlTreeMember&;

  // `k` counts members in key order (YamlSchemaView::members).
  YamlTreeMemberIterator(YamlTreeRef map, size_t k) : map_(map), k_(k) {}
  YamlTreeMember operator*() const {
    const auto& doc = map_.view->doc();
    const uint32_t pair = map_.view->members(*map_.node)[k_];
    return YamlTreeMember(doc.key(*map_.node, pair).text, YamlTreeAdapter({map_.view, &doc.value(*map_.node, pair)}));
  }
  DerefProxy<YamlTreeMember> operator->() const { return DerefProxy<YamlTreeMember>(**this); }
  bool operator==(const YamlTreeMemberIterator& o) const { return k_ == o.k_; }
  bool operator!=(const YamlTreeMemberIterator& o) const { return k_ != o.k_; }
  const YamlTreeMemberIterator& operator++() {
    ++k_;
    return *this;
  }
  YamlTreeMemberIterator operator++(int) {
    YamlTreeMemberIterator pre = *this;
    ++k_;
    return pre;
  }
  const YamlTreeMemberIterator& operator--() {
    --k_;
    return *this;
  }

 private:
  YamlTreeRef map_;
  size_t k_;
};

template <>
struct AdapterTraits<YamlTreeAdapter> {
  using DocumentType = tpu::manifest::YamlDocument;
  static std::string adapterName() { return "YamlTreeAdapter"; }
};

inline YamlTreeArrayIterator YamlTreeArray::begin() const { return {ref_, 0}; }
inline YamlTreeArrayIterator YamlTreeArray::end() const { return {ref_, ref_.node->count}; }
inline YamlTreeMemberIterator YamlTreeObject::begin() const { return {ref_, 0}; }
inline YamlTreeMemberIterator YamlTreeObject::end() const { return {ref_, size()}; }

}  // namespace valijson::adapters
