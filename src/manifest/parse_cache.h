// ParseCache: parsed manifest files kept across loads, keyed by content id
// (a git blob id; DiskTree computes the same id for the same bytes), so a load
// after a one-file change re-parses one file. The parse does not depend on
// the file's path (parsed_file.h), so a renamed file is not re-parsed either.
//
// Entries not used by the latest load are dropped at its end, so the cache
// holds one repository's worth of files. Not thread-safe: one load at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "manifest/parsed_file.h"

namespace tpu::manifest {

class ParseCache {
 public:
  // Files parsed (cache misses) over the cache's life; the daemon exports it.
  uint64_t parses() const { return parses_; }
  // Files served from the cache over the cache's life.
  uint64_t hits() const { return hits_; }
  // Files parsed by the latest load.
  uint64_t last_load_parses() const { return last_parses_; }
  size_t size() const { return entries_.size(); }

  // For the loader. REQUIRES: BeginLoad() ... EndLoad() around each load.
  void BeginLoad();
  std::shared_ptr<const ParsedFile> Find(const std::string& id);
  void Insert(const std::string& id, std::shared_ptr<const ParsedFile> file);
  void CountParse() { ++parses_; ++last_parses_; }
  void EndLoad();

 private:
  struct Entry {
    std::shared_ptr<const ParsedFile> file;
    uint64_t used = 0;  // the load that last used it
  };
  std::unordered_map<std::string, Entry> entries_;
  uint64_t load_ = 0;
  uint64_t parses_ = 0;
  uint64_t hits_ = 0;
  uint64_t last_parses_ = 0;
};

}  // namespace tpu::manifest
