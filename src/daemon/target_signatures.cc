// ComputeSignatures / ChangedTargets: see target_signatures.h.
#include "daemon/target_signatures.h"

#include "manifest/loader.h"

namespace tpu::daemon {
namespace {

using manifest::TreeEntry;

void Walk(const manifest::Tree& tree, const std::string& dir, std::string* out) {
  auto entries = tree.List(dir);
  if (!entries.ok()) {
    *out += dir + " unreadable\n";
    return;
  }
  for (const auto& e : *entries) {
    std::string path = dir + "/" + e.name;
    manifest::DescribeEntry(e, path, out);
    if (e.kind == TreeEntry::Kind::kDirectory) Walk(tree, path, out);
  }
}

TreeSignatures Compute(const manifest::Tree& tree, const manifest::ParseCache* listings) {
  TreeSignatures sig;
  auto projects = tree.List("deploy");
  if (!projects.ok()) {
    sig.outside = "no deploy/";
    return sig;
  }
  for (const auto& p : *projects) {
    std::string pdir = "deploy/" + p.name;
    if (p.kind != TreeEntry::Kind::kDirectory) {
      manifest::DescribeEntry(p, pdir, &sig.outside);
      continue;
    }
    auto clusters = tree.List(pdir);
    if (!clusters.ok()) continue;
    for (const auto& c : *clusters) {
      std::string cdir = pdir + "/" + c.name;
      if (c.kind != TreeEntry::Kind::kDirectory) {
        manifest::DescribeEntry(c, cdir, &sig.outside);
        continue;
      }
      std::string& s = sig.targets[p.name + "/" + c.name];
      s = "dir\n";  // an empty directory is still a target
      const manifest::ParseCache::Listing* listed = listings ? listings->FindListing(cdir) : nullptr;
      if (listed && !listed->has_subdirs) s += listed->signature;
      else Walk(tree, cdir, &s);
    }
  }
  return sig;
}

}  // namespace

TreeSignatures ComputeSignatures(const manifest::Tree& tree) { return Compute(tree, nullptr); }

TreeSignatures ComputeSignatures(const manifest::Tree& tree, const manifest::ParseCache& listings) {
  return Compute(tree, &listings);
}

std::set<std::string> ChangedTargets(const TreeSignatures& before, const TreeSignatures& after) {
  std::set<std::string> changed;
  for (const auto& [k, s] : after.targets) {
    auto it = before.targets.find(k);
    if (it == before.targets.end() || it->second != s) changed.insert(k);
  }
  for (const auto& [k, s] : before.targets)
    if (!after.targets.count(k)) changed.insert(k);
  return changed;
}

}  // namespace tpu::daemon
