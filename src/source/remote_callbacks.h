// The libgit2 callbacks of a fetch: credentials (token or ssh key, from
// GitCredentials) and the ssh host key check (KnownHosts). Internal to
// src/source (it speaks libgit2 types); RemoteRepo installs them.
//
// A callback that refuses records the precise Status in `failure`, which the
// fetch returns (with the redacted URL as context) instead of libgit2's
// generic "authentication failed". Messages never contain a secret.
#pragma once

#include <git2.h>

#include <functional>
#include <string>

#include "base/status.h"
#include "source/credentials.h"

namespace tpu::source {

struct RemoteCallbackState {
  const GitCredentials* credentials = nullptr;
  std::string url;        // for messages (redacted) and the ssh port
  int token_attempts = 0;  // each kind is offered once: a refused secret is not retried
  int ssh_key_attempts = 0;
  // Polled while data flows; true aborts the fetch with DeadlineExceeded.
  std::function<bool()> should_stop;
  Status failure;
};

// Fills `callbacks` to use `state`, which must outlive the operation.
void SetRemoteCallbacks(git_remote_callbacks* callbacks, RemoteCallbackState* state);

// The callbacks themselves, exposed for tests.
int AcquireCredential(git_credential** out, const char* url, const char* username_from_url,
                      unsigned int allowed_types, void* payload);
int CheckCertificate(git_cert* cert, int valid, const char* host, void* payload);

// The port of an ssh URL: "ssh://host:2222/x" → 2222; scp-like "git@host:x" → 22.
int SshPort(const std::string& url);

}  // namespace tpu::source
