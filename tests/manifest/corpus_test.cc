// The bad-input corpus: every directory under corpus/ is a small repository
// with one kind of mistake, and `expected` beside its deploy/ holds the exact
// errors, one "file:line:col: field: message" per line. Each case is checked
// twice: through LoadRepo, and through the real binary (`validate` must exit 1
// and print exactly those lines).
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "manifest/disk_tree.h"
#include "manifest/loader.h"

namespace tpu::manifest {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(TPU_SOURCE_DIR) / "tests/manifest/corpus";

std::vector<std::string> Cases() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kCorpus))
    if (e.is_directory()) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string LoaderOutput(const fs::path& repo) {
  auto tree = DiskTree::Open(repo.string());
  if (!tree.ok()) return tree.status().ToString();
  std::string out;
  for (const auto& e : LoadRepo(**tree).AllErrors()) out += e.ToString() + "\n";
  return out;
}

struct ValidateRun {
  int exit_code = -1;
  std::string out;
};

// Runs the real binary; stderr (the error count) is dropped.
ValidateRun Validate(const fs::path& repo, const std::string& extra = "") {
  std::string cmd = std::string(TPU_BINARY) + " validate --repo '" + repo.string() + "' " + extra + " 2>/dev/null";
  ValidateRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class CorpusTest : public ::testing::TestWithParam<std::string> {
 protected:
  fs::path repo() const { return kCorpus / GetParam(); }
  std::string expected() const { return Slurp(repo() / "expected"); }
};

TEST_P(CorpusTest, LoaderReportsExactErrors) {
  ASSERT_FALSE(expected().empty()) << "every corpus case lists its errors in `expected`";
  EXPECT_EQ(LoaderOutput(repo()), expected());
}

TEST_P(CorpusTest, ValidateExitsOneWithTheSameErrors) {
  ValidateRun r = Validate(repo());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, expected());
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(CorpusSizeTest, HasAtLeastThirtyCases) { EXPECT_GE(Cases().size(), 30u); }

// Too big to keep in git, so made here: one byte over the 1 MiB limit.
TEST(CorpusGeneratedTest, FileOverOneMebibyte) {
  char tmpl[] = "/tmp/corpus_oversize.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  fs::path repo = tmpl;
  fs::create_directories(repo / "deploy/ml-project/cluster-a");
  std::ofstream(repo / "deploy/ml-project/cluster-a/pools.yaml") << std::string((1 << 20) + 1, '#');
  const std::string want =
      "deploy/ml-project/cluster-a/pools.yaml: file is 1048577 bytes; expected at most 1048576 (not read)\n";
  EXPECT_EQ(LoaderOutput(repo), want);
  ValidateRun r = Validate(repo);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, want);
  fs::remove_all(repo);
}

TEST(ValidateCommandTest, JsonListsTheSameErrors) {
  ValidateRun r = Validate(kCorpus / "duplicate-names-across-files", "-o json");
  EXPECT_EQ(r.exit_code, 1);
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["file"], "deploy/ml-project/cluster-a/b.yaml");
  EXPECT_EQ(j[0]["line"], 12);
  EXPECT_EQ(j[0]["column"], 9);
  EXPECT_EQ(j[0]["field"], "metadata.name");
  EXPECT_EQ(j[0]["message"],
            "duplicate TPUNodePool \"train\" in deploy/ml-project/cluster-a (first declared at "
            "deploy/ml-project/cluster-a/a.yaml:4:9)");
}

TEST(ValidateCommandTest, ExampleProjectIsClean) {
  ValidateRun r = Validate(fs::path(TPU_SOURCE_DIR) / "example-project");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find(": valid: 3 targets, 9 TPUNodePools (14 node pools), 1 TPUNodeGroups"), std::string::npos)
      << r.out;
  ValidateRun j = Validate(fs::path(TPU_SOURCE_DIR) / "example-project", "-o json");
  EXPECT_EQ(j.exit_code, 0);
  EXPECT_EQ(j.out, "[]\n");
}

TEST(ValidateCommandTest, MissingRepoIsAnError) {
  ValidateRun r = Validate("/nonexistent/repo");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace tpu::manifest
