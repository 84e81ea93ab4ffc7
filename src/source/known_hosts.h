// KnownHosts: an OpenSSH known_hosts file, to check an ssh server's host key
// before a fetch sends credentials to it (libgit2's certificate callback).
//
// Supports what `ssh-keyscan` and `ssh-keygen -H` write and people edit:
// comma-separated host patterns with * and ? wildcards and !negations,
// "[host]:port" for other ports, hashed names (|1|salt|hash), comments, and
// the @revoked marker. @cert-authority lines are skipped (no certificates).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "base/status.h"

namespace tpu::source {

class KnownHosts {
 public:
  using Sha256 = std::array<unsigned char, 32>;

  // Reads `path`. Lines that cannot be parsed are skipped, as ssh does.
  // IoError when the file cannot be read.
  static Result<KnownHosts> Load(const std::string& path);
  // The same from text, for tests; `origin` names it in messages.
  static KnownHosts Parse(const std::string& text, const std::string& origin);

  // OK when a line for `host` (at `port`) lists a key whose SHA-256 is
  // `key_sha256`. PermissionDenied otherwise: the host is unknown, its key
  // differs (a possible man in the middle), or the key is @revoked.
  Status Check(const std::string& host, int port, const Sha256& key_sha256) const;

  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::vector<std::string> patterns;
    bool revoked = false;
    Sha256 key_sha256{};
  };
  static bool Matches(const Entry& e, const std::string& host);
  std::string origin_;
  std::vector<Entry> entries_;
};

}  // namespace tpu::source
