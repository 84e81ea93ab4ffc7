// CheckoutSource and WorktreeSource: see git_sources.h.
#include "source/git_sources.h"

#include "manifest/disk_tree.h"

namespace tpu::source {

Result<std::string> LoadAppliedRef(const GitRepo& repo) {
  auto commit = repo.ResolveCommit(kAppliedRef);
  if (commit.ok()) return commit;
  if (commit.status().code() == Status::Code::kNotFound) return std::string();
  return commit.status();
}

Status StoreAppliedRef(GitRepo repo, const std::string& commit) {
  return repo.WriteRef(kAppliedRef, commit, "tpu-provisioner: reconciled");
}

Result<Revision> CheckoutSource::Current() {
  auto head = repo_.HeadCommit();
  if (!head.ok()) return head.status().WithContext("read HEAD of " + repo_.workdir());
  return AtCommit(*head);
}

Result<Revision> CheckoutSource::AtCommit(const std::string& commit) {
  auto tree = repo_.Tree(commit);
  if (!tree.ok()) return tree.status().WithContext("read commit " + commit);
  Revision r;
  r.id = commit;
  r.is_commit = true;
  r.tree = std::make_unique<GitTree>(std::move(tree.value()));
  if (auto info = repo_.Info(commit); info.ok()) r.message = info->message;
  return r;
}

Result<Revision> WorktreeSource::Current() {
  auto tree = manifest::DiskTree::Open(root_);
  if (!tree.ok()) return tree.status();
  Revision r;
  r.id = "worktree";
  if (repo_) {
    auto head = repo_->HeadCommit();
    if (head.ok()) r.id += "@" + head->substr(0, 12);
  }
  r.tree = std::move(tree.value());
  return r;
}

Result<Revision> WorktreeSource::AtCommit(const std::string&) { return Current(); }

}  // namespace tpu::source
