// RemoteSource: see remote_source.h.
#include "source/remote_source.h"

namespace tpu::source {

Status RemoteSource::Fetch() {
  auto fetched = fetcher_ ? fetcher_->Fetch(remote_.options()) : remote_.Fetch();
  if (!fetched.ok()) return fetched.status();
  auto updated = remote_.UpdateBranch(*fetched, /*allow_rewrite=*/true);
  return updated.ok() ? Status::OK() : updated.status();
}

Result<Revision> RemoteSource::Current() {
  auto commit = remote_.BranchCommit();
  if (!commit.ok()) return commit.status().WithContext("nothing fetched yet from " + Describe());
  return AtCommit(*commit);
}

Result<Revision> RemoteSource::AtCommit(const std::string& commit) {
  auto tree = remote_.repo().Tree(commit);
  if (!tree.ok()) return tree.status().WithContext("read commit " + commit);
  Revision r;
  r.id = commit;
  r.is_commit = true;
  r.tree = std::make_unique<GitTree>(std::move(tree.value()));
  if (auto info = remote_.repo().Info(commit); info.ok()) r.message = info->message;
  return r;
}

}  // namespace tpu::source
