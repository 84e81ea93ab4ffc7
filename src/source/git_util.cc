// libgit2 glue: init, errors as Status, id formatting. See git_util.h.
#include "source/git_util.h"

#include <mutex>

namespace tpu::source {
namespace {

// The most libgit2's object cache may hold (sizes as libgit2 counts them).
constexpr size_t kObjectCacheBytes = 4 << 20;

}  // namespace

void EnsureLibgit2() {
  static std::once_flag once;
  std::call_once(once, [] {
    git_libgit2_init();
    // libgit2 caches the commits and trees it parses, up to 256 MB by
    // default, and a daemon reads every new commit for months. Evicted
    // objects are read again from disk, and parsed manifests are cached by
    // blob id elsewhere, so a small cap costs next to nothing.
    git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, static_cast<ssize_t>(kObjectCacheBytes));
  });
}

Status GitStatus(int rc, const std::string& context) {
  const git_error* e = git_error_last();
  std::string cause = e && e->message ? e->message : "libgit2 error " + std::to_string(rc);
  int klass = e ? e->klass : GIT_ERROR_NONE;
  std::string msg = context + ": " + cause;
  if (rc == GIT_ENOTFOUND) return Status::NotFound(msg);
  if (rc == GIT_EAUTH || rc == GIT_ECERTIFICATE) return Status::PermissionDenied(msg);
  if (rc == GIT_EMISMATCH || klass == GIT_ERROR_ZLIB || klass == GIT_ERROR_OBJECT ||
      klass == GIT_ERROR_ODB) {
    return Status::Internal(context + ": corrupt or missing object: " + cause);
  }
  if (klass == GIT_ERROR_NET || klass == GIT_ERROR_SSL || klass == GIT_ERROR_SSH ||
      klass == GIT_ERROR_HTTP) {
    return Status::Unavailable(msg);
  }
  if (klass == GIT_ERROR_OS) return Status::IoError(msg);
  return Status::Internal(msg);
}

std::string OidHex(const git_oid& oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, &oid);
  return buf;
}

std::string ShortId(const std::string& hex) { return hex.substr(0, 7); }

Result<git_oid> ParseOid(const std::string& hex) {
  git_oid oid;
  if (hex.size() != GIT_OID_HEXSZ || git_oid_fromstr(&oid, hex.c_str()) != 0) {
    return Status::InvalidArgument("not a full commit id: \"" + hex + "\"");
  }
  return oid;
}

std::string RedactUrl(const std::string& url) {
  // Only "scheme://userinfo@host" carries secrets; scp-like "git@host:path"
  // has a user name and nothing else, so it is left alone.
  size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  size_t host = scheme + 3;
  size_t end = url.find('/', host);
  size_t at = url.rfind('@', end == std::string::npos ? url.size() : end);
  if (at == std::string::npos || at < host) return url;
  return url.substr(0, host) + url.substr(at + 1);
}

}  // namespace tpu::source
