// ParseYaml: scalar resolution, positions, and the inputs that must not get
// through: alias bombs, recursive aliases, duplicate keys, non-UTF-8.
#include "manifest/yaml_tree.h"

#include <gtest/gtest.h>

namespace tpu::manifest {
namespace {

using T = YamlNode::Type;

TEST(YamlTreeTest, ResolvesPlainScalarsAndKeepsQuotedOnesStrings) {
  YamlFile f = ParseYaml("a: 8\nb: \"8\"\nc: true\nd: 'true'\ne: 1.5\nf: ~\ng: 2x4\nh: 0x10\n");
  ASSERT_TRUE(f.errors.empty());
  ASSERT_EQ(f.documents.size(), 1u);
  const YamlDocument& d = f.documents[0];
  EXPECT_EQ(d.Find(d.root(), "a")->type, T::kInt);
  EXPECT_EQ(d.Find(d.root(), "a")->integer, 8);
  EXPECT_EQ(d.Find(d.root(), "b")->type, T::kString);
  EXPECT_EQ(d.Find(d.root(), "c")->type, T::kBool);
  EXPECT_EQ(d.Find(d.root(), "d")->type, T::kString);
  EXPECT_EQ(d.Find(d.root(), "e")->type, T::kFloat);
  EXPECT_EQ(d.Find(d.root(), "f")->type, T::kNull);
  EXPECT_EQ(d.Find(d.root(), "g")->type, T::kString);
  EXPECT_EQ(d.Find(d.root(), "h")->integer, 16);
}

TEST(YamlTreeTest, ResolvesTheCoreSchemaForms) {
  YamlFile f = ParseYaml("[-5, +7, 0o17, 1e3, -.5, .inf, -.inf, .nan, False, TRUE, Null, yes, nan, on, .x, -]\n");
  ASSERT_TRUE(f.errors.empty());
  const YamlDocument& d = f.documents[0];
  const YamlNode& l = d.root();
  ASSERT_EQ(d.size(l), 16u);
  EXPECT_EQ(d.item(l, 0).integer, -5);
  EXPECT_EQ(d.item(l, 1).integer, 7);
  EXPECT_EQ(d.item(l, 2).integer, 15);
  EXPECT_EQ(d.item(l, 3).type, T::kFloat);
  EXPECT_EQ(d.item(l, 3).number, 1000);
  EXPECT_EQ(d.item(l, 4).number, -0.5);
  EXPECT_EQ(d.item(l, 5).type, T::kFloat);
  EXPECT_GT(d.item(l, 5).number, 1e308);
  EXPECT_LT(d.item(l, 6).number, -1e308);
  EXPECT_EQ(d.item(l, 7).type, T::kFloat);
  EXPECT_EQ(d.item(l, 8).type, T::kBool);
  EXPECT_FALSE(d.item(l, 8).boolean);
  EXPECT_TRUE(d.item(l, 9).boolean);
  EXPECT_EQ(d.item(l, 10).type, T::kNull);
  for (size_t i : {11, 12, 13, 14, 15}) EXPECT_EQ(d.item(l, i).type, T::kString) << d.item(l, i).text;
}

TEST(YamlTreeTest, RecordsOneBasedLineAndColumn) {
  YamlFile f = ParseYaml("spec:\n  topology: 2x4\n");
  const YamlDocument& d = f.documents[0];
  const YamlNode* spec = d.Find(d.root(), "spec");
  const YamlNode* key = d.FindKey(*spec, "topology");
  const YamlNode* value = d.Find(*spec, "topology");
  EXPECT_EQ(key->line, 2);
  EXPECT_EQ(key->column, 3);
  EXPECT_EQ(value->column, 13);
}

TEST(YamlTreeTest, SplitsDocumentsAndDropsEmptyOnes) {
  YamlFile f = ParseYaml("---\na: 1\n---\n---\nb: 2\n---\n");
  ASSERT_TRUE(f.errors.empty());
  ASSERT_EQ(f.documents.size(), 2u);
  EXPECT_EQ(f.documents[1].line, 4);  // its `---`
}

TEST(YamlTreeTest, SharesAliasesWithinTheLimit) {
  YamlFile f = ParseYaml("base: &b {x: 1, y: 2}\none: *b\ntwo: *b\n");
  ASSERT_TRUE(f.errors.empty());
  const YamlDocument& d = f.documents[0];
  EXPECT_EQ(d.Find(*d.Find(d.root(), "two"), "y")->integer, 2);
}

TEST(YamlTreeTest, StopsAnAliasBomb) {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    std::string prev(1, char(c - 1));
    bomb += std::string(1, c) + ": &" + c + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev +
            ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n";
  }
  YamlFile f = ParseYaml(bomb);
  ASSERT_EQ(f.errors.size(), 1u);
  EXPECT_EQ(f.errors[0].line, 4);  // d: 10 aliases of ~1,000 nodes each
  EXPECT_EQ(f.errors[0].message,
            "aliases expand this document by more than 10000 nodes (a YAML alias bomb?); expected aliases to be few "
            "and small");
  EXPECT_TRUE(f.documents.empty());
}

TEST(YamlTreeTest, RefusesRecursiveAliases) {
  YamlFile f = ParseYaml("a: &a [1, *a]\n");
  ASSERT_EQ(f.errors.size(), 1u);
  EXPECT_EQ(f.errors[0].message, "alias refers to a node that contains it (recursive YAML is not allowed)");
}

TEST(YamlTreeTest, ReportsDuplicateKeys) {
  YamlFile f = ParseYaml("a: 1\nb: 2\na: 3\n");
  ASSERT_EQ(f.errors.size(), 1u);
  EXPECT_EQ(f.errors[0].line, 3);
  EXPECT_EQ(f.errors[0].column, 1);
  EXPECT_EQ(f.errors[0].message, "duplicate key \"a\"");
}

// Small maps are checked by scanning, large ones with a set: the same errors.
TEST(YamlTreeTest, ReportsEveryRepeatOfAKeyInSmallAndLargeMaps) {
  for (int extra : {0, 30}) {
    std::string text = "a: 1\n? [x]\n: 2\nb: 3\na: 4\nb: 5\na: 6\n";
    for (int i = 0; i < extra; ++i) text += "k" + std::to_string(i) + ": 0\n";
    YamlFile f = ParseYaml(text);
    std::vector<std::string> got;
    for (const auto& e : f.errors) got.push_back(std::to_string(e.line) + ":" + std::to_string(e.column) + " " + e.message);
    EXPECT_EQ(got, (std::vector<std::string>{"2:3 mapping keys must be plain strings", "5:1 duplicate key \"a\"",
                                             "6:1 duplicate key \"b\"", "7:1 duplicate key \"a\""}))
        << extra;
  }
}

TEST(YamlTreeTest, ReportsSyntaxErrorsWithPositionAndContext) {
  YamlFile f = ParseYaml("a: [1, 2\nb: 3\n");
  ASSERT_EQ(f.errors.size(), 1u);
  EXPECT_EQ(f.errors[0].line, 2);
  EXPECT_EQ(f.errors[0].column, 2);
  EXPECT_EQ(f.errors[0].message,
            "YAML syntax error: did not find expected ',' or ']' (while parsing a flow sequence at line 1, column 4)");
}

TEST(YamlTreeTest, ReportsBadIndentationWhereItIs) {
  YamlFile f = ParseYaml("a:\n  b: 1\n c: 2\n");
  ASSERT_EQ(f.errors.size(), 1u);
  EXPECT_EQ(f.errors[0].line, 3);
  EXPECT_EQ(f.errors[0].column, 2);
  EXPECT_EQ(f.errors[0].message,
            "YAML syntax error: did not find expected key (while parsing a block mapping at line 1, column 1)");
}

TEST(YamlTreeTest, NamesATabUsedForIndentation) {
  YamlFile f = ParseYaml("a: 1\nb:\n\tc: 2\n");
  ASSERT_EQ(f.errors.size(), 1u);
  EXPECT_EQ(f.errors[0].line, 3);
  EXPECT_EQ(f.errors[0].column, 1);
  EXPECT_EQ(f.errors[0].message,
            "YAML syntax error: found a tab that cannot start any token (YAML indents with spaces, not tabs)");
}

TEST(YamlTreeTest, RefusesControlCharactersWithTheirPosition) {
  YamlFile f = ParseYaml("a: 1\nb: x\x01y\n");
  ASSERT_EQ(f.errors.size(), 1u);
  EXPECT_EQ(f.errors[0].line, 2);
  EXPECT_EQ(f.errors[0].column, 5);
  EXPECT_EQ(f.errors[0].message, "YAML syntax error: control characters are not allowed");
}

TEST(YamlTreeTest, KeepsDocumentsBeforeASyntaxError) {
  YamlFile f = ParseYaml("a: 1\n---\nb: [\n");
  ASSERT_EQ(f.errors.size(), 1u);
  ASSERT_EQ(f.documents.size(), 1u);
  EXPECT_EQ(f.documents[0].Find(f.documents[0].root(), "a")->integer, 1);
}

TEST(YamlTreeTest, OnlyPlainOrNonStrTaggedScalarsResolve) {
  YamlFile f = ParseYaml("a: 8\nb: \"8\"\nc: '8'\nd: |\n  8\ne: !!str 8\nf: !!int \"8\"\ng: ! 8\nh: ~\ni: \"null\"\n");
  ASSERT_TRUE(f.errors.empty());
  const YamlDocument& d = f.documents[0];
  EXPECT_EQ(d.Find(d.root(), "a")->type, T::kInt);
  EXPECT_EQ(d.Find(d.root(), "b")->type, T::kString);
  EXPECT_EQ(d.Find(d.root(), "b")->text, "8");
  EXPECT_EQ(d.Find(d.root(), "c")->type, T::kString);
  EXPECT_EQ(d.Find(d.root(), "d")->type, T::kString);
  EXPECT_EQ(d.Find(d.root(), "d")->text, "8\n");
  EXPECT_EQ(d.Find(d.root(), "e")->type, T::kString);
  EXPECT_EQ(d.Find(d.root(), "f")->type, T::kInt);
  EXPECT_EQ(d.Find(d.root(), "f")->integer, 8);
  EXPECT_EQ(d.Find(d.root(), "g")->type, T::kString);
  EXPECT_EQ(d.Find(d.root(), "h")->type, T::kNull);
  EXPECT_EQ(d.Find(d.root(), "h")->text, "");
  EXPECT_EQ(d.Find(d.root(), "i")->type, T::kString);
  EXPECT_EQ(d.Find(d.root(), "i")->text, "null");
}

TEST(YamlTreeTest, AnchorsAndAliasesOfScalarsAndMapsRoundTrip) {
  YamlFile f = ParseYaml("zone: &z us-east5-a\nbase: &b\n  x: 1\nother:\n  where: *z\n  copy: *b\n");
  ASSERT_TRUE(f.errors.empty());
  const YamlDocument& d = f.documents[0];
  const YamlNode* other = d.Find(d.root(), "other");
  EXPECT_EQ(d.Find(*other, "where")->text, "us-east5-a");
  EXPECT_EQ(d.Find(*other, "where"), d.Find(d.root(), "zone"));  // the same node, not a copy
  EXPECT_EQ(d.Find(*d.Find(*other, "copy"), "x")->integer, 1);
}

TEST(YamlTreeTest, RefusesAnAliasToAnUnknownAnchor) {
  YamlFile f = ParseYaml("a: 1\nb: *nowhere\n");
  ASSERT_EQ(f.errors.size(), 1u);
  EXPECT_EQ(f.errors[0].line, 2);
  EXPECT_EQ(f.errors[0].column, 4);
  EXPECT_EQ(f.errors[0].message, "alias to an unknown anchor");
}

TEST(YamlTreeTest, RefusesInvalidUtf8WithItsPosition) {
  YamlFile f = ParseYaml("a: 1\nb: caf\xe9\n");
  ASSERT_EQ(f.errors.size(), 1u);
  EXPECT_EQ(f.errors[0].line, 2);
  EXPECT_EQ(f.errors[0].column, 7);
  EXPECT_EQ(f.errors[0].message, "invalid UTF-8 (byte 0xE9); expected a UTF-8 text file");
}

TEST(YamlTreeTest, Utf8Validation) {
  EXPECT_EQ(FindInvalidUtf8("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"), std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("\xc0\xaf"), 0u);          // overlong '/'
  EXPECT_EQ(FindInvalidUtf8("ab\xed\xa0\x80"), 2u);    // surrogate
  EXPECT_EQ(FindInvalidUtf8("\xf4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(FindInvalidUtf8("abc\xe2\x82"), 3u);       // truncated
}

TEST(YamlTreeTest, RefusesDeepNesting) {
  YamlFile f = ParseYaml(std::string(70, '[') + std::string(70, ']'));
  ASSERT_EQ(f.errors.size(), 1u);
  EXPECT_EQ(f.errors[0].line, 1);
  EXPECT_EQ(f.errors[0].column, 65);
  EXPECT_EQ(f.errors[0].message, "maps and lists nested deeper than 64 levels; expected a manifest");
}

}  // namespace
}  // namespace tpu::manifest

namespace tpu::manifest {
namespace {

// Found by tests/fuzz/manifest_fuzzer: yaml-cpp 0.7 looped forever on a stray
// flow entry at the top level; the parser must stop with an error instead.
TEST(YamlTreeTest, StrayFlowEntryIsAnErrorNotAHang) {
  for (const char* text : {",", ",# # v7e tp?a G", "  ,?"}) {
    YamlFile f = ParseYaml(text);
    ASSERT_EQ(f.errors.size(), 1u) << text;
    EXPECT_EQ(f.errors[0].message, "YAML syntax error: did not find expected node content (while parsing a block node)")
        << text;
    EXPECT_EQ(f.errors[0].line, 1);
  }
}

}  // namespace
}  // namespace tpu::manifest
