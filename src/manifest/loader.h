// LoadRepo: a repository's deploy/<project>/<cluster>/ directories → typed
// desired state (DESIGN.md §2), every error of every file included.
//
//   DiskTree tree = ...;            // or source/'s git tree
//   ParseCache cache;               // optional; keep it across loads
//   Repo repo = LoadRepo(tree, {}, &cache);
//   for (const Error& e : repo.AllErrors()) ...
//
// A target (one cluster directory) with any error is blocked (Target::errors);
// errors that belong to no target (a manifest directly in deploy/, a missing
// deploy/) go to Repo::errors. Never throws; never reads through a symlink that
// leaves the repo; never reads a file over the size limit.
#pragma once

#include <cstdint>

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
};

Repo LoadRepo(const Tree& tree, const LoadOptions& options = {}, ParseCache* cache = nullptr);

}  // namespace tpu::manifest
