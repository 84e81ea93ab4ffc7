// TargetSignatures: which targets a new revision changed, without parsing.
//
// A target's signature is the list of (path, content id) of every entry under
// deploy/<project>/<cluster>/, read from the tree listing (git blob ids, or
// DiskTree's digests), so comparing two revisions costs a few directory
// listings. The reconcile loop re-plans only targets whose signature changed
// (plus those appearing or vanishing) when no drift check is due.
#pragma once

#include <map>
#include <set>
#include <string>

#include "manifest/parse_cache.h"
#include "manifest/tree.h"

namespace tpu::daemon {

struct TreeSignatures {
  std::map<std::string, std::string> targets;  // "project/cluster" → signature
  std::string outside;  // entries of deploy/ and deploy/<project>/ that are not targets
};

TreeSignatures ComputeSignatures(const manifest::Tree& tree);
// The same signatures, taking each target directory's listing from the latest
// manifest::LoadRepoIncremental of `tree` with `listings` instead of listing
// it again (directories with subdirectories are still walked).
// REQUIRES: that load was of this same tree.
TreeSignatures ComputeSignatures(const manifest::Tree& tree, const manifest::ParseCache& listings);

// Keys whose signature differs, appears or disappears between `before` and `after`.
std::set<std::string> ChangedTargets(const TreeSignatures& before, const TreeSignatures& after);

}  // namespace tpu::daemon
