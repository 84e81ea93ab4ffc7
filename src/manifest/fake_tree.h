// FakeTree: an in-memory Tree for loader tests, after Ninja's VirtualFileSystem:
// files are path → bytes, ids are git blob ids of the bytes, and every Read is
// recorded so a test can assert what was (not) read. Reads may come from
// several threads (tree.h); Write, Remove and Link only between loads.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "manifest/disk_tree.h"
#include "manifest/tree.h"

namespace tpu::manifest {

class FakeTree : public Tree {
 public:
  void Write(const std::string& path, const std::string& bytes) { files_[path] = bytes; }
  void Remove(const std::string& path) { files_.erase(path); }
  // A symlink the tree will not follow (it leaves the repo).
  void Link(const std::string& path, const std::string& target) { links_[path] = target; }

  Result<std::vector<TreeEntry>> List(const std::string& dir) const override {
    std::string prefix = dir.empty() ? "" : dir + "/";
    std::map<std::string, TreeEntry> out;
    bool found = dir.empty();
    auto add = [&](const std::string& path, TreeEntry::Kind kind, const std::string* bytes, const std::string& link) {
      if (path.compare(0, prefix.size(), prefix) != 0) return;
      found = true;
      std::string rest = path.substr(prefix.size());
      size_t slash = rest.find('/');
      TreeEntry e;
      e.name = rest.substr(0, slash);
      if (slash != std::string::npos) {
        e.kind = TreeEntry::Kind::kDirectory;
      } else {
        e.kind = kind;
        e.link_target = link;
        if (bytes) {
          e.size = bytes->size();
          e.id = GitBlobId(*bytes);
        }
      }
      out[e.name] = e;
    };
    for (const auto& [path, bytes] : files_) add(path, TreeEntry::Kind::kFile, &bytes, "");
    for (const auto& [path, target] : links_) add(path, TreeEntry::Kind::kSymlink, nullptr, target);
    if (!found) return Status::NotFound(dir + ": no such directory");
    std::vector<TreeEntry> v;
    for (auto& [name, e] : out) v.push_back(e);
    return v;
  }

  Result<std::string> Read(const std::string& path) const override {
    std::lock_guard lock(reads_mu_);
    reads.push_back(path);
    auto it = files_.find(path);
    if (it == files_.end()) return Status::NotFound(path);
    return it->second;
  }

  std::string Describe() const override { return "fake tree"; }

  mutable std::vector<std::string> reads;  // several threads' reads come in any order

 private:
  std::map<std::string, std::string> files_;
  std::map<std::string, std::string> links_;
  mutable std::mutex reads_mu_;
};

}  // namespace tpu::manifest
