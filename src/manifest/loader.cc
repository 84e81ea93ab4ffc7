// LoadRepo: walks deploy/<project>/<cluster>/, reports what sits outside that
// layout and lists the files the cache lacks; then, while FileParser parses
// those on every core, hands each target's files, in order, to TargetBuilder.
#include "manifest/loader.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "manifest/file_parser.h"
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

// A file the loader parses (unless it is over the size limit).
bool IsManifest(const TreeEntry& e) {
  return e.kind == TreeEntry::Kind::kFile && IsYaml(e.name) && !Hidden(e.name);
}

Error FileError(const std::string& file, std::string message) { return Error{{file, 0, 0}, "", std::move(message)}; }

std::string SymlinkMessage(const TreeEntry& e) {
  return "symbolic link" + (e.link_target.empty() ? "" : " to \"" + e.link_target + "\"") +
         " leaves the repository or points nowhere; not followed";
}

// Key() order without building the keys.
bool KeyLess(const Target& a, const Target& b) {
  auto at = [](const Target& t, size_t i) -> int {
    if (i < t.project.size()) return static_cast<unsigned char>(t.project[i]);
    if (i == t.project.size()) return '/';
    i -= t.project.size() + 1;
    return i < t.cluster.size() ? static_cast<unsigned char>(t.cluster[i]) : -1;
  };
  const size_t n = std::max(a.project.size() + a.cluster.size(), b.project.size() + b.cluster.size()) + 1;
  for (size_t i = 0; i < n; ++i) {
    int x = at(a, i), y = at(b, i);
    if (x != y) return x < y;
    if (x < 0) return false;
  }
  return false;
}

class Loader {
 public:
  // `previous` (incremental loads only): the previous result, whose targets
  // may be moved from, and the listings they were built from.
  Loader(const Tree& tree, const LoadOptions& options, ParseCache* cache, Repo* previous = nullptr,
         std::unordered_map<std::string, ParseCache::Listing>* previous_listings = nullptr)
      : tree_(tree), options_(options), cache_(cache), previous_(previous),
        previous_listings_(previous_listings) {
    if (previous_)
      for (size_t i = 0; i < previous_->targets.size(); ++i) previous_index_[previous_->targets[i].dir] = i;
  }

  std::unordered_map<std::string, ParseCache::Listing>& listings() { return listings_; }

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
    AssembleTargets();
    if (!std::is_sorted(repo_.targets.begin(), repo_.targets.end(), KeyLess))
      std::sort(repo_.targets.begin(), repo_.targets.end(), KeyLess);
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
      // The directory's own id unchanged (a git tree id): nothing below it
      // changed, so not even its listing is read again.
      if (previous_ && CarryOverById(t.dir, e.id)) continue;
      auto listed = tree_.List(t.dir);
      if (!listed.ok()) {
        t.errors.push_back(FileError(t.dir, listed.status().message()));
        repo_.targets.push_back(std::move(t));
        continue;
      }
      if (previous_ && CarryOver(t.dir, e.id, *listed)) continue;
      QueueParses(t.dir, *listed);
      unbuilt_.push_back({repo_.targets.size(), std::move(*listed), e.id});
      repo_.targets.push_back(std::move(t));
    }
  }

  // The files of a target to be built that the cache cannot give: the same
  // choice Parse() makes, taken ahead so FileParser can parse them meanwhile.
  // A content id seen twice is parsed once: the second file hits the cache
  // entry the first one makes.
  void QueueParses(const std::string& dir, const std::vector<TreeEntry>& entries) {
    for (const auto& e : entries) {
      if (!IsManifest(e) || e.size > options_.max_file_bytes) continue;
      if (cache_ && !e.id.empty() && (cache_->Contains(e.id) || !queued_ids_.insert(e.id).second)) continue;
      to_parse_.push_back(dir + "/" + e.name);
    }
  }

  // Builds the targets the walk left unbuilt, in walk order, as their files
  // come out of FileParser.
  void AssembleTargets() {
    FileParser parser(tree_, std::move(to_parse_), Limits(), options_.threads);
    parser_ = &parser;
    for (Unbuilt& u : unbuilt_) {
      Target& t = repo_.targets[u.index];
      reusable_ = true;
      LoadTarget(&t, u.entries);
      if (previous_) {
        ParseCache::Listing& l = listings_[t.dir];
        l = Describe(t.dir, u.entries);
        l.dir_id = u.dir_id;
        l.reusable = reusable_;
      }
    }
    parser_ = nullptr;
  }

  static ParseCache::Listing Describe(const std::string& dir, const std::vector<TreeEntry>& entries) {
    ParseCache::Listing l;
    for (const auto& e : entries) {
      DescribeEntry(e, dir + "/" + e.name, &l.signature);
      if (e.kind == TreeEntry::Kind::kDirectory) l.has_subdirs = true;
    }
    return l;
  }

  // A target directory listed as at the previous load: its Target moves over
  // as it was, and its files stay in the parse cache.
  bool CarryOver(const std::string& dir, const std::string& dir_id, const std::vector<TreeEntry>& entries) {
    auto prev = previous_listings_->find(dir);
    auto index = previous_index_.find(dir);
    if (prev == previous_listings_->end() || !prev->second.reusable || index == previous_index_.end()) return false;
    ParseCache::Listing now = Describe(dir, entries);
    if (now.signature != prev->second.signature) return false;
    now.reusable = true;
    now.dir_id = dir_id;
    for (const auto& e : entries)
      if (e.kind == TreeEntry::Kind::kFile && !e.id.empty()) cache_->Touch(e.id);
    repo_.targets.push_back(std::move(previous_->targets[index->second]));
    listings_[dir] = std::move(now);
    return true;
  }

  // The same, known from the directory's id alone (no listing read). The
  // files are kept in the parse cache from the previous listing's signature.
  bool CarryOverById(const std::string& dir, const std::string& dir_id) {
    if (dir_id.empty()) return false;
    auto prev = previous_listings_->find(dir);
    auto index = previous_index_.find(dir);
    if (prev == previous_listings_->end() || !prev->second.reusable || prev->second.dir_id != dir_id ||
        index == previous_index_.end())
      return false;
    TouchListed(prev->second.signature);
    repo_.targets.push_back(std::move(previous_->targets[index->second]));
    listings_[dir] = std::move(prev->second);
    return true;
  }

  // Marks as used the content ids in a listing signature (DescribeEntry lines:
  // path \0 kind ':' id link '\n').
  void TouchListed(const std::string& signature) {
    const std::string file_kind = std::to_string(static_cast<int>(TreeEntry::Kind::kFile)) + ":";
    size_t at = 0;
    while (at < signature.size()) {
      const size_t end = signature.find('\n', at);
      const size_t nul = signature.find('\0', at);
      if (end == std::string::npos || nul == std::string::npos || nul > end) break;
      if (signature.compare(nul + 1, file_kind.size(), file_kind) == 0) {
        // A file's id is 40 hex digits (its line ends there: files have no link target).
        const size_t id_at = nul + 1 + file_kind.size();
        cache_->Touch(signature.substr(id_at, end - id_at));
      }
      at = end + 1;
    }
  }

  void LoadTarget(Target* t, const std::vector<TreeEntry>& entries) {
    TargetBuilder builder(t);
    for (const auto& e : entries) {
      std::string path = t->dir + "/" + e.name;
      if (!IsManifest(e)) {
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
    // Files come in QueueParses' order, so a queued file is the next one queued.
    const bool queued = next_queued_ < parser_->size() && parser_->path(next_queued_) == path;
    const size_t slot = queued ? next_queued_++ : 0;
    if (e.id.empty()) reusable_ = false;  // cannot tell next time whether it changed
    if (cache_ && !e.id.empty())
      if (auto hit = cache_->Find(e.id)) return hit;
    // Not queued: a second file with the content id of one that failed to read.
    FileParse parse = queued ? std::move(parser_->Get(slot)) : ParseFile(tree_, path, Limits(), Checker());
    if (!parse.parsed) {
      if (parse.read_failed) reusable_ = false;  // perhaps transient: read it again next time
      t->errors.push_back(FileError(path, std::move(parse.error)));
      return nullptr;
    }
    if (cache_) {
      cache_->CountParse();
      if (!e.id.empty()) cache_->Insert(e.id, parse.parsed);
    }
    return std::move(parse.parsed);
  }

  FileParseLimits Limits() const {
    FileParseLimits limits;
    limits.max_file_bytes = options_.max_file_bytes;
    limits.yaml.max_alias_expansion = options_.max_alias_expansion;
    return limits;
  }

  SchemaChecker& Checker() {
    if (!checker_) checker_ = std::make_unique<SchemaChecker>();
    return *checker_;
  }

  const Tree& tree_;
  const LoadOptions& options_;
  ParseCache* cache_;
  std::unique_ptr<SchemaChecker> checker_;  // for a file parsed outside FileParser; rarely made
  // Targets listed by the walk and built once their files are parsed (AssembleTargets).
  struct Unbuilt {
    size_t index;  // in repo_.targets
    std::vector<TreeEntry> entries;
    std::string dir_id;
  };
  std::vector<Unbuilt> unbuilt_;
  std::vector<std::string> to_parse_;            // QueueParses' files, in walk order
  std::unordered_set<std::string> queued_ids_;   // their content ids
  FileParser* parser_ = nullptr;                 // during AssembleTargets
  size_t next_queued_ = 0;                       // parser_'s next file for Parse()
  Repo repo_;
  Repo* previous_;
  std::unordered_map<std::string, ParseCache::Listing>* previous_listings_;
  std::unordered_map<std::string, size_t> previous_index_;  // previous_ targets by directory
  std::unordered_map<std::string, ParseCache::Listing> listings_;
  bool reusable_ = true;  // the target being loaded can be carried over next time
};

}  // namespace

void DescribeEntry(const TreeEntry& e, const std::string& path, std::string* out) {
  *out += path;
  *out += '\0';
  *out += std::to_string(static_cast<int>(e.kind));
  *out += ':';
  // Without an id (an oversized file), the size stands in: the loader refuses
  // such files anyway, and the error changes only with the size.
  if (e.id.empty()) {
    *out += "size";
    *out += std::to_string(e.size);
  } else {
    *out += e.id;
  }
  *out += e.link_target;
  *out += '\n';
}

const Repo& LoadRepoIncremental(const Tree& tree, const LoadOptions& options, ParseCache* cache) {
  cache->BeginLoad();
  Repo previous = std::move(cache->incremental_repo());
  Loader loader(tree, options, cache, &previous, &cache->listings());
  Repo repo = loader.Load();
  cache->listings() = std::move(loader.listings());
  cache->incremental_repo() = std::move(repo);
  cache->EndLoad();
  return cache->incremental_repo();
}

Repo LoadRepo(const Tree& tree, const LoadOptions& options, ParseCache* cache) {
  if (cache) cache->BeginLoad();
  Repo repo = Loader(tree, options, cache).Load();
  if (cache) cache->EndLoad();
  return repo;
}

}  // namespace tpu::manifest
