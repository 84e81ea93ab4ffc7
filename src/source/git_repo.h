// GitRepo: an open git repository, and the questions the daemon asks of it
// between two revisions: which commit is HEAD, what is in a commit's tree,
// does the new commit descend from the applied one, which paths changed.
//
// Commits are named by their full 40-hex ids everywhere in this API (they end
// up in /status and logs). Copies share one repository; every call is
// serialised on it, so a GitRepo may be used from several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "source/git_tree.h"

namespace tpu::source {

struct RepoHandle;

// What /status and log lines say about a revision.
struct CommitInfo {
  std::string id;       // 40 hex
  std::string summary;  // the first line of the message
  std::string message;  // the whole message (trailers: `TPU-Provisioner: break-glass`)
  std::string author;   // "Name <email>"
  int64_t time = 0;     // commit time, seconds since the epoch
};

class GitRepo {
 public:
  // Opens the repository at `path`: a checkout's root, its .git, or a bare
  // repository. No discovery upwards: the path the user gave is the repo.
  // FailedPrecondition when it belongs to another user and is not listed in
  // git's safe.directory (a checkout written by a git-sync sidecar running as
  // another uid): the message says what to add.
  static Result<GitRepo> Open(const std::string& path);

  // The working directory ("" when bare), the git directory (.git), and the
  // common directory where refs live (differs from git_dir in a linked
  // worktree). All absolute, ending in '/' as libgit2 reports them.
  std::string workdir() const;
  std::string git_dir() const;
  std::string common_dir() const;

  // The commit HEAD points at. NotFound on an unborn branch (a fresh repo).
  Result<std::string> HeadCommit() const;
  // The commit a reference or revision names ("refs/heads/main", "HEAD",
  // "origin/main", a full id). NotFound when it names nothing.
  Result<std::string> ResolveCommit(const std::string& rev) const;
  // Points reference `name` ("refs/tpu-provisioner/applied") at `commit`,
  // creating or moving it; `why` goes into its reflog. A ref also keeps the
  // commit reachable, so a gc of the clone does not drop it.
  Status WriteRef(const std::string& name, const std::string& commit, const std::string& why);

  // Id, summary, author and time of `commit`.
  Result<CommitInfo> Info(const std::string& commit) const;

  // The tree of `commit`, for the manifest loader.
  Result<GitTree> Tree(const std::string& commit) const;

  // True when `commit` is `ancestor` or descends from it; false after a history
  // rewrite (force-push). NotFound when either commit is not in this repository
  // (e.g. the applied commit was lost with an old clone): the caller cannot
  // tell, and should report it like a rewrite.
  Result<bool> DescendsFrom(const std::string& commit, const std::string& ancestor) const;

  // Paths of files added, removed or modified between the trees of `from` and
  // `to`, sorted; both sides of a rename. `from` == "" means every file of `to`.
  Result<std::vector<std::string>> ChangedPaths(const std::string& from, const std::string& to) const;

 private:
  friend class RemoteRepo;
  explicit GitRepo(std::shared_ptr<RepoHandle> h) : handle_(std::move(h)) {}
  std::shared_ptr<RepoHandle> handle_;
};

}  // namespace tpu::source
