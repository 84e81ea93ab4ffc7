// Files parsed on every core (FileParser) against one thread: a generated repo
// of a few hundred files, with every kind of error the loader reports sprinkled
// in, gives the same Repo, the same errors in the same order, the same reads
// and the same parse-cache counts whatever the thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "manifest/fake_tree.h"
#include "manifest/file_parser.h"
#include "manifest/loader.h"

namespace tpu::manifest {
namespace {

// A FakeTree that fails to read some of the files it lists, as a disk or a
// corrupt git object can.
class FlakyTree : public FakeTree {
 public:
  void FailReads(const std::string& path) { unreadable_.insert(path); }
  Result<std::string> Read(const std::string& path) const override {
    if (unreadable_.count(path)) return Status::IoError(path + ": input/output error");
    return FakeTree::Read(path);
  }

 private:
  std::set<std::string> unreadable_;
};

std::string Pool(const std::string& name, const std::string& extra = "") {
  return "apiVersion: tpu-provisioner.io/v1alpha1\nkind: TPUNodePool\nmetadata:\n  name: " + name +
         "\nspec:\n  accelerator: v5e\n  topology: 4x8\n" + extra;
}

std::string ClusterYaml(const std::string& name) {
  return "apiVersion: tpu-provisioner.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: " + name +
         "\nspec:\n  location: us-central1-a\n  maxDeletePercent: 20\n";
}

std::string Group(const std::string& project, const std::string& name) {
  return "apiVersion: tpu.google.com/v1alpha1\nkind: TPUNodeGroup\nmetadata:\n  name: " + name +
         "\nspec:\n  project: " + project +
         "\n  nodeLocation: us-central1-a\n  nodeCount: 2\n  topology: 2x2x2\n"
         "  instanceConfig:\n    machineType: tpu7x-standard-4t\n";
}

// 5 projects × 8 clusters × about 9 files; about one pool file in twelve is
// broken, and each kind of directory-level error is in one target.
void Generate(FlakyTree* tree) {
  int n = 0;
  for (const std::string project : {"proj-a", "proj-b", "Bad_Project", "proj-d", "proj-e"}) {
    const std::string pdir = "deploy/" + project;
    tree->Write(pdir + "/stray.yaml", Pool("stray"));  // outside the layout
    for (int c = 0; c < 8; ++c) {
      const std::string cluster = project == "proj-e" && c == 5 ? "Cluster_5" : "c" + std::to_string(c);
      const std::string dir = pdir + "/" + cluster;
      tree->Write(dir + "/cluster.yaml", ClusterYaml(project == "proj-d" && c == 3 ? "elsewhere" : cluster));
      tree->Write(dir + "/shared.yaml", Pool("shared"));  // one content id in every target
      tree->Write(dir + "/README", "not a manifest\n");
      tree->Write(dir + "/.hidden.yaml", "kind: [\n");
      if (project == "proj-a" && c == 2) tree->Link(dir + "/out.yaml", "/etc/passwd");
      if (project == "proj-b" && c == 6) tree->Write(dir + "/huge.yaml", std::string((1 << 20) + 1, '#'));
      if (c == 7) tree->Write(dir + "/group.yaml", Group(project, "g" + std::to_string(c)));
      for (int p = 0; p < 6; ++p, ++n) {
        const std::string path = dir + "/p" + std::to_string(p) + ".yaml";
        const std::string name = "pool-" + std::to_string(p);
        if (n % 53 == 5) tree->Write(path, Pool(name, "  slices: zero\n"));
        else if (n % 59 == 7) tree->Write(path, "apiVersion: [unclosed\n");
        else if (n % 61 == 3) tree->Write(path, Pool("pool-0"));  // duplicate across files
        else if (n % 67 == 11) tree->Write(path, Pool(name, "  cluster: other\n"));
        else if (n % 71 == 13) tree->Write(path, "apiVersion: v1\nkind: ConfigMap\n");
        else tree->Write(path, Pool(name, "  slices: " + std::to_string(1 + n % 3) + "\n"));
        // Unreadable, with bytes no other file has (a cache hit would hide the failure).
        if (n % 73 == 17) {
          tree->Write(path, Pool(name, "  slices: 9\n"));
          tree->FailReads(path);
        }
      }
    }
  }
}

std::vector<std::string> ErrorLines(const Repo& repo) {
  std::vector<std::string> out;
  for (const auto& e : repo.AllErrors()) out.push_back(e.ToString());
  return out;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

LoadOptions Threads(int n) {
  LoadOptions o;
  o.threads = n;
  return o;
}

TEST(LoaderParallelTest, SameRepoErrorsAndReadsOnOneThreadAndOnMany) {
  FlakyTree tree;
  Generate(&tree);
  Repo serial = LoadRepo(tree, Threads(1));
  const std::vector<std::string> serial_reads = tree.reads;
  tree.reads.clear();
  Repo parallel = LoadRepo(tree, Threads(4));

  // The generated repo is what the test needs: many files, every kind of error.
  EXPECT_GT(serial_reads.size(), 250u);
  const std::vector<std::string> errors = ErrorLines(serial);
  auto count = [&](const std::string& what) {
    return std::count_if(errors.begin(), errors.end(),
                         [&](const std::string& e) { return e.find(what) != std::string::npos; });
  };
  EXPECT_GT(count("expected an integer"), 0);
  EXPECT_GT(count("input/output error"), 0);
  EXPECT_GT(count("duplicate TPUNodePool"), 0);
  EXPECT_GT(count("contradicts the directory"), 0);
  EXPECT_GT(count("unknown kind"), 0);
  EXPECT_GT(count("manifest outside the layout"), 0);
  EXPECT_GT(count("not followed"), 0);
  EXPECT_GT(count("(not read)"), 0);
  EXPECT_GT(count("invalid project directory"), 0);
  EXPECT_GT(count("invalid cluster directory"), 0);
  EXPECT_GT(std::count_if(serial.targets.begin(), serial.targets.end(), [](const Target& t) { return !t.blocked(); }),
            10);

  EXPECT_EQ(ErrorLines(parallel), errors);
  EXPECT_TRUE(parallel == serial);
  EXPECT_EQ(Sorted(tree.reads), Sorted(serial_reads)) << "every file read once, on whichever thread";
  EXPECT_TRUE(LoadRepo(tree) == serial) << "one thread per core";
}

TEST(LoaderParallelTest, SameCacheCountsAndIncrementalResults) {
  FlakyTree one_tree, many_tree;
  Generate(&one_tree);
  Generate(&many_tree);
  ParseCache one, many;
  for (int round = 0; round < 3; ++round) {
    if (round == 1)
      for (FlakyTree* t : {&one_tree, &many_tree})
        for (int c = 0; c < 8; ++c)  // a commit that touches a file in every target of a project
          t->Write("deploy/proj-b/c" + std::to_string(c) + "/p2.yaml", Pool("pool-2", "  slices: 4\n"));
    Repo a = LoadRepo(one_tree, Threads(1), &one);
    Repo b = LoadRepo(many_tree, Threads(4), &many);
    EXPECT_TRUE(a == b) << "round " << round;
    EXPECT_EQ(ErrorLines(a), ErrorLines(b)) << "round " << round;
    EXPECT_EQ(one.last_load_parses(), many.last_load_parses()) << "round " << round;
    EXPECT_EQ(one.parses(), many.parses()) << "round " << round;
    EXPECT_EQ(one.hits(), many.hits()) << "round " << round;
    EXPECT_EQ(one.size(), many.size()) << "round " << round;
  }
  EXPECT_GT(one.hits(), 0u);  // "shared.yaml" hit the cache within the first load already

  ParseCache inc_one, inc_many;
  for (int round = 0; round < 2; ++round) {
    if (round == 1)
      for (FlakyTree* t : {&one_tree, &many_tree}) t->Write("deploy/proj-a/c1/p0.yaml", Pool("pool-0", "  slices: 5\n"));
    const Repo& a = LoadRepoIncremental(one_tree, Threads(1), &inc_one);
    const Repo& b = LoadRepoIncremental(many_tree, Threads(4), &inc_many);
    EXPECT_TRUE(a == b) << "round " << round;
    EXPECT_EQ(inc_one.last_load_parses(), inc_many.last_load_parses()) << "round " << round;
    EXPECT_EQ(inc_one.hits(), inc_many.hits()) << "round " << round;
    for (const Target& t : b.targets) {
      const ParseCache::Listing* x = inc_one.FindListing(t.dir);
      const ParseCache::Listing* y = inc_many.FindListing(t.dir);
      ASSERT_EQ(x == nullptr, y == nullptr) << t.dir;
      if (x) {
        EXPECT_EQ(x->signature, y->signature) << t.dir;
        EXPECT_EQ(x->reusable, y->reusable) << t.dir << ": an unreadable file makes a target not reusable";
      }
    }
  }
  EXPECT_EQ(inc_many.last_load_parses(), 1u);
}

TEST(FileParserTest, ThreadsOnlyForManyFiles) {
  FakeTree tree;
  std::vector<std::string> paths;
  for (int i = 0; i < 64; ++i) {
    paths.push_back("deploy/p/c/f" + std::to_string(i) + ".yaml");
    tree.Write(paths.back(), i % 8 == 0 ? "kind: [\n" : Pool("f" + std::to_string(i)));
  }
  paths.push_back("deploy/p/c/missing.yaml");
  FileParseLimits limits;
  limits.max_file_bytes = 1 << 20;

  FileParser many(tree, paths, limits, 4);
  EXPECT_EQ(many.workers(), 3u);
  SchemaChecker checker;
  for (size_t i = 0; i < paths.size(); ++i) {
    FileParse want = ParseFile(tree, paths[i], limits, checker);
    FileParse& got = many.Get(i);
    EXPECT_EQ(got.error, want.error) << paths[i];
    EXPECT_EQ(got.read_failed, want.read_failed) << paths[i];
    ASSERT_EQ(got.parsed == nullptr, want.parsed == nullptr) << paths[i];
    if (!got.parsed) continue;
    EXPECT_EQ(got.parsed->docs.size(), want.parsed->docs.size()) << paths[i];
    ASSERT_EQ(got.parsed->errors.size(), want.parsed->errors.size()) << paths[i];
    for (size_t e = 0; e < got.parsed->errors.size(); ++e)
      EXPECT_EQ(got.parsed->errors[e].message, want.parsed->errors[e].message) << paths[i];
  }
  EXPECT_TRUE(many.Get(paths.size() - 1).read_failed);

  EXPECT_EQ(FileParser(tree, paths, limits, 1).workers(), 0u);
  EXPECT_EQ(FileParser(tree, {paths[0]}, limits, 4).workers(), 0u) << "a one-file commit starts no thread";
  EXPECT_EQ(FileParser(tree, {}, limits, 4).workers(), 0u);
}

}  // namespace
}  // namespace tpu::manifest
