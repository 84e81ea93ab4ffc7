// inotify watcher with debounce and an eventfd wake-up. See watcher.h.
#include "source/watcher.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>

#include "source/git_repo.h"

namespace tpu::source {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Git replaces a ref by writing "<name>.lock" and renaming it over <name>
// (IN_MOVED_TO); some tools rewrite in place (IN_CLOSE_WRITE).
constexpr uint32_t kRefEvents = IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM;
constexpr uint32_t kTreeEvents =
    IN_CREATE | IN_DELETE | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF;
constexpr uint32_t kTreeParentEvents = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO;

std::string StripSlash(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

Status Errno(const std::string& what) { return Status::IoError(what + ": " + std::strerror(errno)); }

}  // namespace

WatcherOptions CheckoutWatchOptions(const GitRepo& repo, bool watch_files) {
  WatcherOptions o;
  o.git_dir = StripSlash(repo.git_dir());
  o.common_dir = StripSlash(repo.common_dir());
  if (watch_files && !repo.workdir().empty()) o.tree_dir = StripSlash(repo.workdir()) + "/deploy";
  return o;
}

Result<std::unique_ptr<Watcher>> Watcher::Create(const WatcherOptions& options) {
  int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (in < 0) {
    if (errno == EMFILE) {
      return Status::ResourceExhausted("inotify instance limit reached (raise fs.inotify.max_user_instances)");
    }
    return Errno("inotify_init1");
  }
  int wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake < 0) {
    Status s = Errno("eventfd");
    close(in);
    return s;
  }
  WatcherOptions o = options;
  o.git_dir = StripSlash(o.git_dir);
  o.common_dir = StripSlash(o.common_dir.empty() ? o.git_dir : o.common_dir);
  o.tree_dir = StripSlash(o.tree_dir);
  std::unique_ptr<Watcher> w(new Watcher(o, in, wake));
  if (!o.git_dir.empty()) {
    if (Status s = w->AddWatch(o.git_dir, kGitDir); !s.ok()) return s;
    if (Status s = w->AddWatch(o.common_dir, kCommonDir); !s.ok()) return s;
    if (Status s = w->AddRecursive(o.common_dir + "/refs/heads", kRefs, false); !s.ok()) return s;
  }
  if (!o.tree_dir.empty()) {
    // The parent tells us when the tree appears (a first `mkdir deploy`).
    if (Status s = w->AddWatch(fs::path(o.tree_dir).parent_path().string(), kTreeParent); !s.ok()) return s;
    if (Status s = w->AddRecursive(o.tree_dir, kTree, false); !s.ok()) return s;
  }
  return w;
}

Watcher::Watcher(const WatcherOptions& options, int inotify_fd, int wake_fd)
    : options_(options), inotify_fd_(inotify_fd), wake_fd_(wake_fd) {}

Watcher::~Watcher() {
  close(inotify_fd_);
  close(wake_fd_);
}

void Watcher::Wake() {
  uint64_t one = 1;
  // Cannot fail usefully: EAGAIN means the counter is already non-zero.
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
}

Status Watcher::AddWatch(const std::string& path, unsigned role) {
  uint32_t mask = role & kRefs ? kRefEvents : role & kTree ? kTreeEvents : role & kTreeParent ? kTreeParentEvents
                                                                                               : kRefEvents;
  // IN_MASK_ADD: the git dir and common dir may be one directory with two roles.
  int wd = inotify_add_watch(inotify_fd_, path.c_str(), mask | IN_MASK_ADD | IN_ONLYDIR | IN_DONT_FOLLOW);
  if (wd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::NotFound("watch " + path + ": no such directory");
    if (errno == ENOSPC) {
      return Status::ResourceExhausted("watch " + path +
                                       ": inotify watch limit reached (raise fs.inotify.max_user_watches)");
    }
    return Errno("watch " + path);
  }
  Watch& w = watches_[wd];
  w.path = path;  // a directory moved inside the tree keeps its wd; this renames it
  w.roles |= role;
  return Status::OK();
}

Status Watcher::AddRecursive(const std::string& dir, unsigned role, bool report) {
  Status s = AddWatch(dir, role);
  // Gone already (created and removed in one burst): nothing to watch.
  if (s.code() == Status::Code::kNotFound) return Status::OK();
  if (!s.ok()) return s;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    fs::file_status st = it->symlink_status(ec);
    if (ec) break;
    std::string path = it->path().string();
    if (fs::is_directory(st)) {
      if (Status sub = AddRecursive(path, role, report); !sub.ok()) return sub;
    } else if (report) {
      Record(role & kRefs, role & kTree, path);  // may predate the watch, so its event was never seen
    }
  }
  return Status::OK();
}

Status Watcher::Rescan() {
  // Events were dropped, including perhaps IN_IGNORED for removed directories
  // and IN_CREATE for new ones: rebuild the watch table from the disk.
  for (const auto& [wd, w] : watches_) inotify_rm_watch(inotify_fd_, wd);
  watches_.clear();
  Status first;
  auto keep = [&first](Status s) { if (first.ok() && !s.ok()) first = std::move(s); };
  if (!options_.git_dir.empty()) {
    keep(AddWatch(options_.git_dir, kGitDir));
    keep(AddWatch(options_.common_dir, kCommonDir));
    keep(AddRecursive(options_.common_dir + "/refs/heads", kRefs, false));
  }
  if (!options_.tree_dir.empty()) {
    keep(AddWatch(fs::path(options_.tree_dir).parent_path().string(), kTreeParent));
    keep(AddRecursive(options_.tree_dir, kTree, false));
  }
  return first;
}

void Watcher::Record(bool refs, bool files, const std::string& path) {
  Clock::time_point now = Clock::now();
  if (!HasPending()) {
    pending_ = WatchResult{};
    pending_.kind = WatchResult::Kind::kChanged;
    first_event_ = now;
  }
  last_event_ = now;
  pending_.refs_changed |= refs;
  pending_.files_changed |= files;
  if (!path.empty() && pending_.paths.size() < kMaxReportedPaths &&
      std::find(pending_.paths.begin(), pending_.paths.end(), path) == pending_.paths.end()) {
    pending_.paths.push_back(path);
  }
}

Status Watcher::ReadEvents() {
  alignas(inotify_event) char buf[64 * 1024];
  Status first;
  auto keep = [&first](Status s) { if (first.ok() && !s.ok()) first = std::move(s); };
  bool overflow = false;
  const std::string tree_name = fs::path(options_.tree_dir).filename().string();
  while (true) {
    ssize_t n = read(inotify_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    if (n < 0) return Errno("read inotify events");
    if (n == 0) break;
    for (char* p = buf; p < buf + n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(p);
      p += sizeof(inotify_event) + ev->len;
      if (ev->mask & IN_Q_OVERFLOW) {
        overflow = true;
        continue;
      }
      auto it = watches_.find(ev->wd);
      if (it == watches_.end()) continue;  // removed, or events of a watch we dropped
      if (ev->mask & IN_IGNORED) {
        watches_.erase(it);
        continue;
      }
      const Watch w = it->second;  // AddRecursive below may rehash the map
      std::string name = ev->len ? ev->name : "";
      std::string full = name.empty() ? w.path : w.path + "/" + name;
      bool new_dir = (ev->mask & IN_ISDIR) && (ev->mask & (IN_CREATE | IN_MOVED_TO));
      if ((w.roles & kGitDir) && name == "HEAD") Record(true, false, full);
      if ((w.roles & kCommonDir) && name == "packed-refs") Record(true, false, full);
      if ((w.roles & kRefs) && !name.ends_with(".lock")) {
        if (new_dir) keep(AddRecursive(full, kRefs, true));
        Record(true, false, full);
      }
      if (w.roles & kTree) {
        if (new_dir) keep(AddRecursive(full, kTree, true));
        if ((ev->mask & IN_ISDIR) && (ev->mask & IN_MOVED_FROM)) {
          // Moved out (or renamed: IN_MOVED_TO re-adds it): stop watching the old subtree.
          for (auto sub = watches_.begin(); sub != watches_.end();) {
            const std::string& sp = sub->second.path;
            bool under = sp == full || (sp.size() > full.size() && sp.starts_with(full) && sp[full.size()] == '/');
            if (under && (sub->second.roles & kTree)) {
              inotify_rm_watch(inotify_fd_, sub->first);
              sub = watches_.erase(sub);
            } else {
              ++sub;
            }
          }
        }
        Record(false, true, full);
      }
      if ((w.roles & kTreeParent) && name == tree_name) {
        if (new_dir) keep(AddRecursive(full, kTree, true));
        Record(false, true, full);
      }
    }
  }
  if (overflow) {
    Record(!options_.git_dir.empty(), !options_.tree_dir.empty(), "");
    pending_.rescan = true;
    keep(Rescan());
  }
  return first;
}

std::chrono::milliseconds Watcher::PendingDebounce() const {
  return pending_.files_changed ? options_.debounce : options_.ref_debounce;
}

Result<WatchResult> Watcher::Wait(Clock::time_point deadline) {
  while (true) {
    Clock::time_point now = Clock::now();
    Clock::time_point limit = deadline;
    if (HasPending()) limit = std::min({limit, last_event_ + PendingDebounce(), first_event_ + options_.max_delay});
    int timeout_ms = 0;
    if (limit > now) {
      auto ms = std::chrono::ceil<std::chrono::milliseconds>(limit - now).count();
      timeout_ms = static_cast<int>(std::min<decltype(ms)>(ms, INT_MAX));
    }
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, timeout_ms) < 0) {
      if (errno == EINTR) continue;
      return Errno("poll");
    }
    if (fds[1].revents & POLLIN) {
      uint64_t count;
      [[maybe_unused]] ssize_t n = read(wake_fd_, &count, sizeof count);
      WatchResult woken;
      woken.kind = WatchResult::Kind::kWoken;
      return woken;
    }
    if (fds[0].revents & POLLIN) {
      if (Status s = ReadEvents(); !s.ok()) return s;
    }
    now = Clock::now();
    if (HasPending() && (now >= last_event_ + PendingDebounce() || now >= first_event_ + options_.max_delay)) {
      WatchResult out = std::move(pending_);
      pending_ = WatchResult{};
      return out;
    }
    if (now >= deadline) return WatchResult{};
  }
}

}  // namespace tpu::source
