// TargetSignatures: the signatures taken from an incremental load's listings
// are the ones a fresh walk of the tree gives, and a one-file change marks its
// target alone.
#include "daemon/target_signatures.h"

#include <gtest/gtest.h>

#include "manifest/disk_tree.h"
#include "manifest/loader.h"

namespace tpu::daemon {
namespace {

// A minimal in-memory tree: files by path, blob ids of their bytes.
class MapTree : public manifest::Tree {
 public:
  std::map<std::string, std::string> files;

  Result<std::vector<manifest::TreeEntry>> List(const std::string& dir) const override {
    const std::string prefix = dir.empty() ? "" : dir + "/";
    std::map<std::string, manifest::TreeEntry> out;
    for (const auto& [path, bytes] : files) {
      if (path.compare(0, prefix.size(), prefix) != 0) continue;
      const std::string rest = path.substr(prefix.size());
      manifest::TreeEntry e;
      e.name = rest.substr(0, rest.find('/'));
      if (rest.find('/') != std::string::npos) {
        e.kind = manifest::TreeEntry::Kind::kDirectory;
      } else {
        e.kind = manifest::TreeEntry::Kind::kFile;
        e.size = bytes.size();
        e.id = manifest::GitBlobId(bytes);
      }
      out[e.name] = e;
    }
    if (out.empty() && !dir.empty()) return Status::NotFound(dir);
    std::vector<manifest::TreeEntry> v;
    for (auto& [n, e] : out) v.push_back(e);
    return v;
  }
  Result<std::string> Read(const std::string& path) const override {
    auto it = files.find(path);
    if (it == files.end()) return Status::NotFound(path);
    return it->second;
  }
  std::string Describe() const override { return "map tree"; }
};

TEST(TargetSignaturesTest, FromAnIncrementalLoadTheyAreTheWalksOwn) {
  MapTree tree;
  tree.files["deploy/p/a/pools.yaml"] = "x: 1\n";
  tree.files["deploy/p/b/pools.yaml"] = "x: 2\n";
  tree.files["deploy/p/b/nested/more.yaml"] = "x: 3\n";  // a subdirectory: walked
  tree.files["deploy/p/README"] = "hi\n";
  manifest::ParseCache cache;
  manifest::LoadRepoIncremental(tree, {}, &cache);
  TreeSignatures before = ComputeSignatures(tree, cache);
  EXPECT_EQ(before.targets, ComputeSignatures(tree).targets);
  EXPECT_EQ(before.outside, ComputeSignatures(tree).outside);

  tree.files["deploy/p/a/pools.yaml"] = "x: 10\n";
  manifest::LoadRepoIncremental(tree, {}, &cache);
  TreeSignatures after = ComputeSignatures(tree, cache);
  EXPECT_EQ(after.targets, ComputeSignatures(tree).targets);
  EXPECT_EQ(ChangedTargets(before, after), std::set<std::string>{"p/a"});

  tree.files["deploy/p/b/nested/more.yaml"] = "x: 30\n";
  manifest::LoadRepoIncremental(tree, {}, &cache);
  EXPECT_EQ(ChangedTargets(after, ComputeSignatures(tree, cache)), std::set<std::string>{"p/b"});
}

}  // namespace
}  // namespace tpu::daemon
