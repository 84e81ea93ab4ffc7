// YamlSchemaView's key order, the adapter's lookups, and the JSON copy the
// adapter freezes values to (see yaml_schema_adapter.h).
#include "manifest/yaml_schema_adapter.h"

#include <algorithm>

namespace tpu::manifest {

// Manifest maps have a handful of keys; a hostile one may have thousands.
constexpr uint32_t kInsertionSortMax = 32;

nlohmann::json YamlToJson(const YamlDocument& doc, const YamlNode& n) {
  using json = nlohmann::json;
  switch (n.type) {
    case YamlNode::Type::kNull: return nullptr;
    case YamlNode::Type::kBool: return n.boolean;
    case YamlNode::Type::kInt: return n.integer;
    case YamlNode::Type::kFloat: return n.number;
    case YamlNode::Type::kString: return n.text;
    case YamlNode::Type::kSeq: {
      json a = json::array();
      for (size_t i = 0; i < n.count; ++i) a.push_back(YamlToJson(doc, doc.item(n, i)));
      return a;
    }
    case YamlNode::Type::kMap: {
      json o = json::object();
      for (size_t i = 0, e = doc.size(n); i < e; ++i) o[doc.key(n, i).text] = YamlToJson(doc, doc.value(n, i));
      return o;
    }
  }
  return nullptr;
}

YamlSchemaView::YamlSchemaView(const YamlDocument& doc) : doc_(doc), spans_(doc.nodes.size()) {
  for (size_t i = 0; i < doc.nodes.size(); ++i) {
    const YamlNode& m = doc.nodes[i];
    if (m.type != YamlNode::Type::kMap || m.count == 0) continue;
    const uint32_t start = static_cast<uint32_t>(order_.size());
    const uint32_t pairs = m.count / 2;
    for (uint32_t p = 0; p < pairs; ++p) order_.push_back(p);
    auto first = order_.begin() + start;
    auto key = [&](uint32_t p) -> const std::string& { return doc.key(m, p).text; };
    auto less = [&](uint32_t a, uint32_t b) { return key(a) < key(b); };
    if (pairs <= kInsertionSortMax) {  // stable, and unlike stable_sort allocates nothing
      for (auto it = first + 1; it < order_.end(); ++it)
        for (auto j = it; j != first && less(*j, *(j - 1)); --j) std::iter_swap(j, j - 1);
    } else {
      std::stable_sort(first, order_.end(), less);
    }
    // A key written twice: the last pair stands for it, as in a JSON object.
    auto out = first;
    for (auto it = first; it != order_.end(); ++it) {
      if (it + 1 != order_.end() && key(*(it + 1)) == key(*it)) continue;
      *out++ = *it;
    }
    order_.erase(out, order_.end());
    spans_[i] = {start, static_cast<uint32_t>(order_.size()) - start};
  }
}

std::pair<uint32_t, uint32_t> YamlSchemaView::span(const YamlNode& m) const {
  if (m.count == 0) return {0, 0};  // also the adapters' default empty map, which is no node of doc_
  return spans_[static_cast<size_t>(&m - doc_.nodes.data())];
}

}  // namespace tpu::manifest

namespace valijson::adapters {

YamlTreeRef EmptyYamlTree(tpu::manifest::YamlNode::Type type) {
  using tpu::manifest::YamlNode;
  static const tpu::manifest::YamlDocument kNoDocument;
  static const tpu::manifest::YamlSchemaView kNoView(kNoDocument);
  static const YamlNode kEmptySeq = [] {
    YamlNode n;
    n.type = YamlNode::Type::kSeq;
    return n;
  }();
  static const YamlNode kEmptyMap = [] {
    YamlNode n;
    n.type = YamlNode::Type::kMap;
    return n;
  }();
  return {&kNoView, type == YamlNode::Type::kSeq ? &kEmptySeq : &kEmptyMap};
}

YamlTreeMemberIterator YamlTreeObject::find(const std::string& name) const {
  const auto& doc = ref_.view->doc();
  const uint32_t* first = ref_.view->members(*ref_.node);
  const uint32_t* last = first + size();
  const uint32_t* it = std::lower_bound(first, last, name, [&](uint32_t pair, const std::string& n) {
    return doc.key(*ref_.node, pair).text < n;
  });
  if (it == last || doc.key(*ref_.node, *it).text != name) return end();
  return {ref_, static_cast<size_t>(it - first)};
}

}  // namespace valijson::adapters
