// Test helpers for src/source: a temporary directory removed at the end of the
// test, and real git repositories built with the git CLI (so the code under
// test reads what git itself wrote, not what libgit2 thinks git writes).
#pragma once

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "base/status.h"

namespace tpu {
// Readable Status values in gtest failure messages.
inline void PrintTo(const Status& s, std::ostream* os) { *os << s.ToString(); }
}  // namespace tpu

namespace tpu::source::testing {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tpu-source-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    // Object files are read-only; remove_all copes, but corrupted ones were chmodded anyway.
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

// Single-quotes `s` for /bin/sh.
inline std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs a shell command; returns its stdout (trailing newline stripped). Fails
// the test (non-fatally) when it exits non-zero.
inline std::string Sh(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) {
    ADD_FAILURE() << "popen: " << cmd;
    return out;
  }
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int rc = pclose(p);
  EXPECT_EQ(rc, 0) << cmd << "\n" << out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// `git -C dir <args>` with a fixed identity and no user or system config.
inline std::string Git(const fs::path& dir, const std::string& args) {
  return Sh("GIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com "
            "GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com git -C " +
            Quote(dir.string()) + " " + args);
}

inline void WriteFile(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

// A checkout at `dir` on branch main.
inline void InitRepo(const fs::path& dir) {
  fs::create_directories(dir);
  Git(dir, "init -q -b main");
}

// Stages everything and commits; returns the new commit's id.
inline std::string CommitAll(const fs::path& dir, const std::string& message) {
  Git(dir, "add -A");
  Git(dir, "commit -q --allow-empty -m " + Quote(message));
  return Git(dir, "rev-parse HEAD");
}

}  // namespace tpu::source::testing
