// ParseCache: parsed manifest files kept across loads, keyed by content id
// (a git blob id; DiskTree computes the same id for the same bytes), so a load
// after a one-file change re-parses one file. The parse does not depend on
// the file's path (parsed_file.h), so a renamed file is not re-parsed either.
//
// Entries not used by the latest load are dropped at its end, so the cache
// holds one repository's worth of files. Not thread-safe: one load at a time;
// a load that parses on every core uses it from its calling thread only.
//
// For LoadRepoIncremental (loader.h) it also keeps the latest Repo and, per
// target directory, the listing it was built from, so a target whose listing
// did not change is carried over instead of re-assembled.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "manifest/parsed_file.h"
#include "manifest/types.h"

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
  // Whether `id` is cached, without marking it used or counting a hit.
  bool Contains(const std::string& id) const { return entries_.count(id) > 0; }
  void Insert(const std::string& id, std::shared_ptr<const ParsedFile> file);
  void CountParse() { ++parses_; ++last_parses_; }
  // Keeps `id` for this load without counting a hit (a carried-over target's file).
  void Touch(const std::string& id);
  void EndLoad();

  // A target directory's listing at the latest load: one line per entry
  // (DescribeEntry in loader.h), in name order.
  struct Listing {
    std::string dir_id;  // the directory's own content id, when the tree gives one (a git tree id)
    std::string signature;
    bool has_subdirs = false;  // entries below it are not in `signature`
    bool reusable = false;     // every file had a content id and was read: the target can be carried over
  };
  // The latest load's listing of target directory `dir`, or null.
  const Listing* FindListing(const std::string& dir) const;
  // LoadRepoIncremental's state (loader.cc): its latest result, and the
  // listings of the latest load by target directory.
  Repo& incremental_repo() { return repo_; }
  std::unordered_map<std::string, Listing>& listings() { return listings_; }

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
  // LoadRepoIncremental's state: the latest result and the listings it came from.
  Repo repo_;
  std::unordered_map<std::string, Listing> listings_;  // by target directory
};

}  // namespace tpu::manifest
