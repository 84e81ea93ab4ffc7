// ComputeSignatures / ChangedTargets: see target_signatures.h.
#include "daemon/target_signatures.h"

namespace tpu::daemon {
namespace {

using manifest::TreeEntry;

void Describe(const TreeEntry& e, const std::string& path, std::string* out) {
  *out += path;
  *out += '\0';
  *out += std::to_string(static_cast<int>(e.kind));
  *out += ':';
  // Without an id (an oversized file), the size stands in: the loader refuses
  // such files anyway, and the error changes only with the size.
  *out += e.id.empty() ? "size" + std::to_string(e.size) : e.id;
  *out += e.link_target;
  *out += '\n';
}

void Walk(const manifest::Tree& tree, const std::string& dir, std::string* out) {
  auto entries = tree.List(dir);
  if (!entries.ok()) {
    *out += dir + " unreadable\n";
    return;
  }
  for (const auto& e : *entries) {
    std::string path = dir + "/" + e.name;
    Describe(e, path, out);
    if (e.kind == TreeEntry::Kind::kDirectory) Walk(tree, path, out);
  }
}

}  // namespace

TreeSignatures ComputeSignatures(const manifest::Tree& tree) {
  TreeSignatures sig;
  auto projects = tree.List("deploy");
  if (!projects.ok()) {
    sig.outside = "no deploy/";
    return sig;
  }
  for (const auto& p : *projects) {
    std::string pdir = "deploy/" + p.name;
    if (p.kind != TreeEntry::Kind::kDirectory) {
      Describe(p, pdir, &sig.outside);
      continue;
    }
    auto clusters = tree.List(pdir);
    if (!clusters.ok()) continue;
    for (const auto& c : *clusters) {
      std::string cdir = pdir + "/" + c.name;
      if (c.kind != TreeEntry::Kind::kDirectory) {
        Describe(c, cdir, &sig.outside);
        continue;
      }
      std::string& s = sig.targets[p.name + "/" + c.name];
      s = "dir\n";  // an empty directory is still a target
      Walk(tree, cdir, &s);
    }
  }
  return sig;
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
