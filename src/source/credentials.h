// GitCredentials: where the secrets for fetching a remote live — never the
// secrets themselves, so this struct can be copied, logged and put in flags.
//
// HTTPS sends a token as the Basic-auth password, read from a file (a mounted
// Kubernetes Secret, re-read at every connection so rotation just works) or an
// environment variable. SSH uses an unencrypted private key file and checks
// the server's host key against a known_hosts file; with no known_hosts file
// every ssh host is refused rather than trusted on first use.
#pragma once

#include <string>

#include "base/env.h"
#include "base/status.h"

namespace tpu::source {

struct GitCredentials {
  std::string token_file;  // HTTPS token in a file (whitespace around it ignored)
  std::string token_env;   // or: the name of an environment variable holding it
  // The Basic-auth user sent with the token, unless the URL names one.
  // GitHub wants "x-access-token" for app tokens and accepts it for PATs;
  // GitLab accepts "oauth2".
  std::string username = "x-access-token";
  std::string ssh_key_file;          // private key; "<file>.pub" is used when present
  std::string ssh_known_hosts_file;  // host keys to trust, OpenSSH format

  bool has_token() const { return !token_file.empty() || !token_env.empty(); }
};

// The token, from token_file if set, else token_env. Errors name the file or
// variable, never the value: FailedPrecondition when none is configured or it
// is empty, IoError when the file cannot be read.
Result<std::string> ReadToken(const GitCredentials& credentials, const Env& env = Env::Default());

}  // namespace tpu::source
