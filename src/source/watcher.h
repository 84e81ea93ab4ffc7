// Watcher: wakes the daemon loop when a checkout gets a new commit or its
// deploy/ files change, through inotify, debounced, with no polling.
//
// What is watched: the git directory's HEAD and the common directory's
// packed-refs and refs/heads/ (recursively) — what `git commit`, `git pull`,
// `git reset` and `git update-ref` rewrite — and a file tree (deploy/)
// recursively, new directories included as they appear; the tree need not
// exist yet. File events are coalesced until `debounce` passes without one (but
// never held longer than `max_delay`), so a pull writing a hundred files is one
// wake-up. A ref update is not debounced by default (`ref_debounce` 0): git
// moves a ref with one atomic rename, so the new commit is complete the moment
// its event arrives, and waiting would only delay the reconcile; events already
// queued with it are still reported in the same wake-up. A lost-events
// overflow is reported as `rescan`: re-read everything.
//
// No threads: Wait() blocks in poll(2) on the inotify fd and an eventfd, so an
// idle daemon costs nothing. Wait() is for one thread at a time; Wake() may be
// called from any thread or a signal handler. With no paths at all it is just
// a sleep-until-deadline-or-Wake(), which is what the `--repo URL` mode needs
// (nothing local to watch; webhooks and shutdown wake it).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace tpu::source {

class GitRepo;

struct WatcherOptions {
  // The checkout's git directory (HEAD) and common directory (refs/heads,
  // packed-refs); the same unless it is a linked worktree. "" skips refs.
  std::string git_dir;
  std::string common_dir;
  // A tree watched recursively for file changes (the checkout's deploy/), for
  // --worktree mode. "" skips it.
  std::string tree_dir;
  // Quiet period that ends a burst of events under tree_dir (files are
  // written one by one; a half-written tree is not worth a reconcile).
  std::chrono::milliseconds debounce{50};
  // Quiet period for a change that touched refs only (HEAD, refs/heads,
  // packed-refs). 0: reported as soon as it is read.
  std::chrono::milliseconds ref_debounce{0};
  // Longest a change waits for quiet before it is reported anyway.
  std::chrono::milliseconds max_delay{1000};
};

// Options for a local checkout: its refs, and its deploy/ when `watch_files`.
WatcherOptions CheckoutWatchOptions(const GitRepo& repo, bool watch_files);

struct WatchResult {
  enum class Kind {
    kTimeout,  // the deadline passed with nothing to report
    kWoken,    // Wake() was called
    kChanged,  // something changed, then things were quiet for its debounce
  };
  Kind kind = Kind::kTimeout;
  bool refs_changed = false;   // HEAD, a branch or packed-refs moved
  bool files_changed = false;  // something under tree_dir
  bool rescan = false;         // events were lost: do not trust `paths`, re-read all
  // Changed paths (absolute) in event order, without repeats, at most
  // kMaxReportedPaths of them: for log lines, not for deciding what to re-read.
  std::vector<std::string> paths;
};

class Watcher {
 public:
  static constexpr size_t kMaxReportedPaths = 64;

  // Starts watching. ResourceExhausted when the inotify limits are reached
  // (fs.inotify.max_user_watches / max_user_instances); NotFound when
  // git_dir or common_dir does not exist.
  static Result<std::unique_ptr<Watcher>> Create(const WatcherOptions& options);
  ~Watcher();
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  // Blocks until a debounced change is ready, Wake() is called, or `deadline`
  // passes, whichever is first. A change still in its quiet period at the
  // deadline or a wake-up stays pending for the next call. An error (a new directory that
  // cannot be watched) is returned once; watching goes on without it, so the
  // caller should fall back to its poll interval for safety.
  Result<WatchResult> Wait(std::chrono::steady_clock::time_point deadline);

  // Makes the current or next Wait() return kWoken; several calls before it
  // returns make one wake-up. The caller keeps the reason (shutdown requested,
  // webhook received) in its own state and looks at it after kWoken.
  // Thread- and async-signal-safe (one write(2) to an eventfd).
  void Wake();

  // A change has been seen and is waiting out its quiet period.
  bool HasPending() const { return pending_.kind == WatchResult::Kind::kChanged; }

  // The number of inotify watches held, for tests and /metrics.
  size_t watch_count() const { return watches_.size(); }

 private:
  enum Role : unsigned { kGitDir = 1, kCommonDir = 2, kRefs = 4, kTree = 8, kTreeParent = 16 };
  struct Watch {
    std::string path;
    unsigned roles = 0;
  };
  Watcher(const WatcherOptions& options, int inotify_fd, int wake_fd);

  Status AddWatch(const std::string& path, unsigned role);
  // Watches `dir` and every directory below it; files found (when `report`)
  // are recorded as changes, since they may predate the watch.
  Status AddRecursive(const std::string& dir, unsigned role, bool report);
  // Re-walks every watched root after lost events.
  Status Rescan();
  Status ReadEvents();
  void Record(bool refs, bool files, const std::string& path);
  // The quiet period the pending change waits for: `debounce` once any file
  // changed, `ref_debounce` while only refs did.
  std::chrono::milliseconds PendingDebounce() const;

  const WatcherOptions options_;
  const int inotify_fd_;
  const int wake_fd_;
  std::map<int, Watch> watches_;  // by watch descriptor
  WatchResult pending_;
  std::chrono::steady_clock::time_point first_event_, last_event_;
};

}  // namespace tpu::source
