// LoadRepo: a repository's deploy/<project>/<cluster>/ directories → typed
// desired state (README, "Manifest reference"), every error of every file included.
//
//   DiskTree tree = ...;            // or source/'s git tree
//   ParseCache cache;               // optional; keep it across loads
//   Repo repo = LoadRepo(tree, {}, &cache);
//   for (const Error& e : repo.AllErrors()) ...
//
// A target (one cluster directory) with any error is blocked (Target::errors);
// errors that belong to no target (a manifest directly in deploy/, a missing
// deploy/) go to Repo::errors. Never throws; never reads through a symlink that
// leaves the repo; never reads a file over the size limit. Files are parsed on
// every core (LoadOptions::threads), so the Tree is read from several threads.
#pragma once

#include <cstdint>
#include <string>

#include "manifest/parse_cache.h"
#include "manifest/tree.h"
#include "manifest/types.h"

namespace tpu::manifest {

struct LoadOptions {
  // Larger files are refused unread: manifests are small, and a huge file is
  // a mistake or an attack.
  uint64_t max_file_bytes = 1 << 20;
  // See YamlLimits. REQUIRES: the same limits for every load that shares a cache.
  uint64_t max_alias_expansion = 10000;
  // Threads that parse files, the calling one included; 0: one per core.
  // Few files get no extra thread whatever this says (FileParser). The result
  // is the same for any count.
  int threads = 0;
};

Repo LoadRepo(const Tree& tree, const LoadOptions& options = {}, ParseCache* cache = nullptr);

// LoadRepo for a loop that loads revision after revision (the daemon): the
// result is kept in `cache`, and a target whose directory listing (the names,
// kinds and content ids of its entries) is the same as at the previous
// incremental load with this cache is carried over as it was instead of being
// re-assembled from its files. A one-file commit then costs the directory
// listings plus the one target's build, not the fleet's. The listings are
// left in the cache (ParseCache::FindListing) for change detection.
// Returns a reference valid until the next load with `cache`.
// REQUIRES: the same options for every load that shares a cache.
const Repo& LoadRepoIncremental(const Tree& tree, const LoadOptions& options, ParseCache* cache);

// One line describing a tree entry for change detection: `path`, its kind, its
// content id (its size when it has none) and a link's target.
void DescribeEntry(const TreeEntry& e, const std::string& path, std::string* out);

}  // namespace tpu::manifest
