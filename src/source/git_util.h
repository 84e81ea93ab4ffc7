// libgit2 glue shared by the files of src/source: once-per-process library
// init, owning handles for libgit2 objects, and libgit2 errors turned into a
// Status. Internal to src/source; nothing outside includes <git2.h>.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include <git2.h>

#include "base/status.h"

namespace tpu::source {

// Initialises libgit2 once per process (it is refcounted; we never shut it
// down, since handles may outlive any owner we could pick).
void EnsureLibgit2();

// Owning handles: `GitPtr<git_tree> t(raw)` frees with git_tree_free.
template <typename T> struct GitDeleter;
#define TPU_GIT_DELETER(T, fn) \
  template <> struct GitDeleter<T> { void operator()(T* p) const { fn(p); } };
TPU_GIT_DELETER(git_repository, git_repository_free)
TPU_GIT_DELETER(git_tree, git_tree_free)
TPU_GIT_DELETER(git_tree_entry, git_tree_entry_free)
TPU_GIT_DELETER(git_blob, git_blob_free)
TPU_GIT_DELETER(git_commit, git_commit_free)
TPU_GIT_DELETER(git_object, git_object_free)
TPU_GIT_DELETER(git_reference, git_reference_free)
TPU_GIT_DELETER(git_remote, git_remote_free)
TPU_GIT_DELETER(git_diff, git_diff_free)
TPU_GIT_DELETER(git_odb, git_odb_free)
TPU_GIT_DELETER(git_config, git_config_free)
#undef TPU_GIT_DELETER
template <typename T> using GitPtr = std::unique_ptr<T, GitDeleter<T>>;

// One open repository, shared by a GitRepo and every GitTree read from it.
// libgit2 forbids using one git_repository from two threads at once, so every
// use holds `mu`; trees then stay usable from any thread.
struct RepoHandle {
  GitPtr<git_repository> repo;
  GitPtr<git_odb> odb;
  std::mutex mu;
};

// The Status for libgit2 return code `rc` (< 0), with the thread's last
// libgit2 error message: "<context>: <libgit2 message>". The code follows the
// cause: not found → NotFound, authentication and certificates →
// PermissionDenied, network → Unavailable, corrupt objects → Internal.
Status GitStatus(int rc, const std::string& context);

// "1a2b3c4": the short form of a 40-hex commit id, for messages.
std::string ShortId(const std::string& hex);
std::string OidHex(const git_oid& oid);

// Parses a full 40-hex commit id. InvalidArgument otherwise: callers pass ids
// they got from us, never user-typed abbreviations.
Result<git_oid> ParseOid(const std::string& hex);

// `url` with any "user:password@" removed, so a token pasted into a URL never
// reaches a log line or an error message.
std::string RedactUrl(const std::string& url);

}  // namespace tpu::source
