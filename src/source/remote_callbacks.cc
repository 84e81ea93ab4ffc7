// Credential and host key callbacks for fetches. See remote_callbacks.h.
#include "source/remote_callbacks.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "source/git_util.h"
#include "source/known_hosts.h"

namespace tpu::source {
namespace {

int Refuse(RemoteCallbackState* st, Status s, int rc) {
  git_error_set_str(GIT_ERROR_NET, s.message().c_str());
  if (st->failure.ok()) st->failure = std::move(s);
  return rc;
}

std::string TokenSource(const GitCredentials& c) {
  return c.token_file.empty() ? "$" + c.token_env : c.token_file;
}

int CheckStop(RemoteCallbackState* st) {
  if (!st->should_stop || !st->should_stop()) return 0;
  return Refuse(st, Status::DeadlineExceeded("stopped before it finished"), GIT_EUSER);
}

}  // namespace

void SetRemoteCallbacks(git_remote_callbacks* callbacks, RemoteCallbackState* state) {
  callbacks->credentials = AcquireCredential;
  callbacks->certificate_check = CheckCertificate;
  callbacks->transfer_progress = [](const git_indexer_progress*, void* payload) {
    return CheckStop(static_cast<RemoteCallbackState*>(payload));
  };
  callbacks->sideband_progress = [](const char*, int, void* payload) {
    return CheckStop(static_cast<RemoteCallbackState*>(payload));
  };
  callbacks->payload = state;
}

int AcquireCredential(git_credential** out, const char* /*url*/, const char* username_from_url,
                      unsigned int allowed, void* payload) {
  auto* st = static_cast<RemoteCallbackState*>(payload);
  const GitCredentials& c = *st->credentials;
  const bool url_user = username_from_url && *username_from_url;
  if (!c.ssh_key_file.empty()) {
    std::string user = url_user ? username_from_url : "git";
    // libssh2 asks for the user name alone first when the URL has none.
    if (allowed == GIT_CREDENTIAL_USERNAME) return git_credential_username_new(out, user.c_str());
    if (allowed & GIT_CREDENTIAL_SSH_KEY) {
      if (st->ssh_key_attempts++ > 0) {
        return Refuse(st, Status::PermissionDenied("ssh key " + c.ssh_key_file + " was refused"), GIT_EAUTH);
      }
      if (access(c.ssh_key_file.c_str(), R_OK) != 0) {
        return Refuse(st, Status::IoError("read ssh key " + c.ssh_key_file + ": " + std::strerror(errno)), GIT_EAUTH);
      }
      std::string pub = c.ssh_key_file + ".pub";
      bool has_pub = access(pub.c_str(), R_OK) == 0;
      return git_credential_ssh_key_new(out, user.c_str(), has_pub ? pub.c_str() : nullptr,
                                        c.ssh_key_file.c_str(), nullptr);
    }
  }
  if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && c.has_token()) {
    if (st->token_attempts++ > 0) {
      return Refuse(st, Status::PermissionDenied("the token from " + TokenSource(c) + " was refused"), GIT_EAUTH);
    }
    Result<std::string> token = ReadToken(c);
    if (!token.ok()) return Refuse(st, token.status(), GIT_EAUTH);
    std::string user = url_user ? username_from_url : c.username;
    int rc = git_credential_userpass_plaintext_new(out, user.c_str(), token->c_str());
    OPENSSL_cleanse(token->data(), token->size());
    return rc;
  }
  std::string wanted = (allowed & GIT_CREDENTIAL_SSH_KEY) ? "an ssh key" : "a token";
  return Refuse(st, Status::PermissionDenied("the remote asks for " + wanted + " but none is configured"), GIT_EAUTH);
}

int CheckCertificate(git_cert* cert, int valid, const char* host, void* payload) {
  auto* st = static_cast<RemoteCallbackState*>(payload);
  std::string name = host ? host : "";
  if (cert->cert_type != GIT_CERT_HOSTKEY_LIBSSH2) {
    // TLS: libgit2 has verified the chain against the system CAs.
    if (valid) return 0;
    return Refuse(st, Status::PermissionDenied("TLS certificate of " + name + " is not valid"), GIT_ECERTIFICATE);
  }
  const auto* hk = reinterpret_cast<const git_cert_hostkey*>(cert);
  const GitCredentials& c = *st->credentials;
  if (c.ssh_known_hosts_file.empty()) {
    return Refuse(st, Status::PermissionDenied("ssh host key of " + name +
                                               " cannot be checked: no known_hosts file configured"),
                  GIT_ECERTIFICATE);
  }
  KnownHosts::Sha256 sha;
  if (hk->type & GIT_CERT_SSH_RAW) {
    SHA256(reinterpret_cast<const unsigned char*>(hk->hostkey), hk->hostkey_len, sha.data());
  } else if (hk->type & GIT_CERT_SSH_SHA256) {
    std::memcpy(sha.data(), hk->hash_sha256, sha.size());
  } else {
    return Refuse(st, Status::PermissionDenied("ssh host " + name + " offered no key we can check"), GIT_ECERTIFICATE);
  }
  // Re-read at every connection, like the token: the file is a mounted Secret or ConfigMap.
  Result<KnownHosts> known = KnownHosts::Load(c.ssh_known_hosts_file);
  if (!known.ok()) return Refuse(st, known.status(), GIT_ECERTIFICATE);
  if (Status s = known->Check(name, SshPort(st->url), sha); !s.ok()) return Refuse(st, s, GIT_ECERTIFICATE);
  return 0;
}

int SshPort(const std::string& url) {
  size_t scheme = url.find("://");
  if (scheme == std::string::npos) return 22;  // scp-like "user@host:path"
  size_t start = scheme + 3;
  std::string authority = url.substr(start, url.find('/', start) - start);
  if (size_t at = authority.rfind('@'); at != std::string::npos) authority = authority.substr(at + 1);
  size_t colon = authority.rfind(':');
  if (colon == std::string::npos || authority.find(']', colon) != std::string::npos) return 22;
  int port = std::atoi(authority.c_str() + colon + 1);
  return port > 0 ? port : 22;
}

}  // namespace tpu::source
