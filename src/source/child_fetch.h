// ChildFetcher: runs a remote's fetch in a child process (this binary's
// hidden `git-fetch` command) so that it can be abandoned. libgit2 1.5 has no
// network timeout: a remote that accepts a connection and never answers holds
// git_remote_fetch, and with it the daemon loop, forever, and no progress
// callback fires to abort it. A child can be killed: when `timeout` passes
// with no result, or when Cancel() is called (shutdown).
//
// The child gets the URL, branch, work directory and where the credentials
// are (file paths, an environment variable's name), never a secret, on its
// command line; the environment is inherited. While data arrives it prints
// progress marks (at most a few a second), and at the end one line: the
// status code and the commit, or the code and the error message. The timeout
// counts from the last thing the child printed, so it bounds a stall, not
// the length of a fetch that keeps moving.
//
// Fetch from one thread at a time; Cancel from any.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "base/status.h"
#include "source/remote.h"

namespace tpu::source {

class ChildFetcher {
 public:
  // `binary`: this program ("/proc/self/exe").
  ChildFetcher(std::string binary, std::chrono::milliseconds timeout)
      : binary_(std::move(binary)), timeout_(timeout) {}

  // The commit `remote.branch` points at on the remote, as RemoteRepo::Fetch
  // reports it; DeadlineExceeded after `timeout` with nothing received.
  Result<std::string> Fetch(const RemoteOptions& remote);
  // Kills a fetch in flight (it ends with Unavailable), and every later one
  // until Reset().
  void Cancel() { cancelled_ = true; }
  void Reset() { cancelled_ = false; }

 private:
  // The child's output on `fd` until it ends; an error when the fetch is
  // cancelled or nothing arrives for the timeout.
  Status ReadAll(int fd, const std::string& where, std::string* out);

  const std::string binary_;
  const std::chrono::milliseconds timeout_;
  std::atomic<bool> cancelled_{false};
};

// The child's arguments after the binary: "git-fetch --url … --branch … --workdir …"
// and the credential flags that are set.
std::vector<std::string> ChildFetchArgs(const RemoteOptions& remote);
// What the child prints while data arrives.
inline constexpr char kChildFetchProgress = '.';
// The child's last line for `result`, and the parent's reading of its output.
std::string FormatChildFetchResult(const Result<std::string>& result);
Result<std::string> ParseChildFetchResult(const std::string& output);

}  // namespace tpu::source
