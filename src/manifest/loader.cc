// LoadRepo: walks deploy/<project>/<cluster>/, reports what sits outside that
// layout, gets each manifest's ParsedFile (from the cache or by parsing), and
// hands each target's files to AddFileToTarget (target_builder.h).
#include "manifest/loader.h"

#include <algorithm>

#include "manifest/names.h"
#include "manifest/target_builder.h"

namespace tpu::manifest {
namespace {

const char kLayout[] = "deploy/<project>/<cluster>/*.yaml";

bool IsYaml(const std::string& name) {
  auto ends = [&](const char* suffix) {
    std::string s(suffix);
    return name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".yaml") || ends(".yml");
}

bool Hidden(const std::string& name) { return !name.empty() && name[0] == '.'; }

Error FileError(const std::string& file, std::string message) { return Error{{file, 0, 0}, "", std::move(message)}; }

std::string SymlinkMessage(const TreeEntry& e) {
  return "symbolic link" + (e.link_target.empty() ? "" : " to \"" + e.link_target + "\"") +
         " leaves the repository or points nowhere; not followed";
}

class Loader {
 public:
  Loader(const Tree& tree, const LoadOptions& options, ParseCache* cache)
      : tree_(tree), options_(options), cache_(cache) {}

  Repo Load() {
    auto root = tree_.List("deploy");
    if (!root.ok()) {
      repo_.errors.push_back(FileError("deploy", std::string("no deploy/ directory (expected manifests in ") +
                                                     kLayout + ")"));
      return std::move(repo_);
    }
    for (const auto& e : *root) {
      std::string path = "deploy/" + e.name;
      if (e.kind == TreeEntry::Kind::kDirectory) LoadProject(e.name);
      else Stray(e, path, nullptr);
    }
    std::sort(repo_.targets.begin(), repo_.targets.end(),
              [](const Target& a, const Target& b) { return a.Key() < b.Key(); });
    return std::move(repo_);
  }

 private:
  // Something where only directories belong. YAML files and links are errors
  // (their pools would silently not exist); other files (a README) are fine.
  void Stray(const TreeEntry& e, const std::string& path, Target* target) {
    std::vector<Error>& errors = target ? target->errors : repo_.errors;
    if (e.kind == TreeEntry::Kind::kSymlink) errors.push_back(FileError(path, SymlinkMessage(e)));
    else if (e.kind == TreeEntry::Kind::kDirectory)
      errors.push_back(FileError(path, std::string("directory outside the layout; nothing below it is read "
                                                   "(expected ") + kLayout + ")"));
    else if (IsYaml(e.name) && !Hidden(e.name))
      errors.push_back(FileError(path, std::string("manifest outside the layout; it is not read (expected ") +
                                           kLayout + ")"));
  }

  void LoadProject(const std::string& project) {
    std::string dir = "deploy/" + project;
    auto entries = tree_.List(dir);
    if (!entries.ok()) {
      repo_.errors.push_back(FileError(dir, entries.status().message()));
      return;
    }
    std::string bad_project = CheckProjectId(project);
    for (const auto& e : *entries) {
      if (e.kind != TreeEntry::Kind::kDirectory) {
        Stray(e, dir + "/" + e.name, nullptr);
        continue;
      }
      Target t;
      t.project = project;
      t.cluster = e.name;
      t.dir = dir + "/" + e.name;
      if (!bad_project.empty()) t.errors.push_back(FileError(dir, "invalid project directory: " + bad_project));
      if (std::string why = CheckRfc1035(e.name, 40); !why.empty())
        t.errors.push_back(FileError(t.dir, "invalid cluster directory: " + why));
      LoadTarget(&t);
      repo_.targets.push_back(std::move(t));
    }
  }

  void LoadTarget(Target* t) {
    auto entries = tree_.List(t->dir);
    if (!entries.ok()) {
      t->errors.push_back(FileError(t->dir, entries.status().message()));
      return;
    }
    TargetBuilder builder(t);
    for (const auto& e : *entries) {
      std::string path = t->dir + "/" + e.name;
      if (e.kind != TreeEntry::Kind::kFile || !IsYaml(e.name) || Hidden(e.name)) {
        if (e.kind != TreeEntry::Kind::kFile) Stray(e, path, t);
        continue;
      }
      if (e.size > options_.max_file_bytes) {
        t->errors.push_back(FileError(path, "file is " + std::to_string(e.size) + " bytes; expected at most " +
                                                std::to_string(options_.max_file_bytes) + " (not read)"));
        continue;
      }
      std::shared_ptr<const ParsedFile> parsed = Parse(e, path, t);
      if (parsed) builder.AddFile(path, e.name, *parsed);
    }
    builder.Finish();
  }

  std::shared_ptr<const ParsedFile> Parse(const TreeEntry& e, const std::string& path, Target* t) {
    if (cache_ && !e.id.empty())
      if (auto hit = cache_->Find(e.id)) return hit;
    auto bytes = tree_.Read(path);
    if (!bytes.ok()) {
      t->errors.push_back(FileError(path, bytes.status().message()));
      return nullptr;
    }
    if (bytes->size() > options_.max_file_bytes) {  // grew since it was listed
      t->errors.push_back(FileError(path, "file is " + std::to_string(bytes->size()) + " bytes; expected at most " +
                                              std::to_string(options_.max_file_bytes)));
      return nullptr;
    }
    if (!checker_) checker_ = std::make_unique<SchemaChecker>();
    YamlLimits limits;
    limits.max_alias_expansion = options_.max_alias_expansion;
    auto parsed = std::make_shared<const ParsedFile>(ParseManifestFile(*bytes, limits, *checker_));
    if (cache_) {
      cache_->CountParse();
      if (!e.id.empty()) cache_->Insert(e.id, parsed);
    }
    return parsed;
  }

  const Tree& tree_;
  const LoadOptions& options_;
  ParseCache* cache_;
  std::unique_ptr<SchemaChecker> checker_;  // made on the first parse; cache hits need none
  Repo repo_;
};

}  // namespace

Repo LoadRepo(const Tree& tree, const LoadOptions& options, ParseCache* cache) {
  if (cache) cache->BeginLoad();
  Repo repo = Loader(tree, options, cache).Load();
  if (cache) cache->EndLoad();
  return repo;
}

}  // namespace tpu::manifest
