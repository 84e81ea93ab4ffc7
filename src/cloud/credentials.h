// Access tokens for Google APIs, found in the order Google's client libraries
// use, after gcloud's CLOUDSDK_AUTH_ACCESS_TOKEN_FILE (a token minted
// elsewhere): GOOGLE_APPLICATION_CREDENTIALS (service_account key → RS256 JWT bearer
// grant at token_uri; authorized_user → refresh-token grant), the gcloud
// well-known file ($CLOUDSDK_CONFIG or ~/.config/gcloud/
// application_default_credentials.json), then the metadata server
// (GCE_METADATA_HOST, header Metadata-Flavor: Google). Tokens are cached until
// shortly before they expire. A static token serves the emulator.
//
// Thread safety: TokenProvider::Token() may be called concurrently; a caching
// provider fetches at most one token at a time. Tokens are never logged.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/env.h"
#include "base/status.h"
#include "http/transport.h"

namespace tpu::cloud {

struct AccessToken {
  std::string value;
  std::chrono::system_clock::time_point expiry;
};

// Where API calls get their bearer token.
class TokenProvider {
 public:
  virtual ~TokenProvider() = default;
  // A valid token; empty means "send no Authorization header".
  virtual Result<std::string> Token() = 0;
  // What kind of credential this is, for logs ("service_account a@b", "metadata").
  virtual std::string Describe() const = 0;
};

// One token exchange, uncached. Implementations below.
class TokenFetcher {
 public:
  virtual ~TokenFetcher() = default;
  virtual Result<AccessToken> Fetch() = 0;
  virtual std::string Describe() const = 0;
};

// A fixed token (or none): the emulator, or --access-token.
class StaticTokenProvider : public TokenProvider {
 public:
  explicit StaticTokenProvider(std::string token) : token_(std::move(token)) {}
  Result<std::string> Token() override { return token_; }
  std::string Describe() const override { return "static token"; }

 private:
  std::string token_;
};

// An access token minted elsewhere and kept in a file (gcloud's
// CLOUDSDK_AUTH_ACCESS_TOKEN_FILE; CI writes the token Workload Identity
// Federation gives it). Re-read on every call, so whoever refreshes the file
// refreshes the token.
class TokenFileProvider : public TokenProvider {
 public:
  explicit TokenFileProvider(std::string path, const Env& env = Env::Default())
      : path_(std::move(path)), env_(env) {}
  Result<std::string> Token() override;
  std::string Describe() const override { return "access token file " + path_; }

 private:
  std::string path_;
  const Env& env_;
};

// Caches a fetcher's token until `refresh_margin` before its expiry.
class CachingTokenProvider : public TokenProvider {
 public:
  // Refresh this long before expiry, as Google's libraries do.
  static constexpr std::chrono::seconds kDefaultRefreshMargin{300};

  CachingTokenProvider(std::unique_ptr<TokenFetcher> fetcher, const Clock& clock = Env::Default(),
                       std::chrono::seconds refresh_margin = kDefaultRefreshMargin);
  Result<std::string> Token() override;
  std::string Describe() const override { return fetcher_->Describe(); }
  int fetches() const;  // for tests

 private:
  std::unique_ptr<TokenFetcher> fetcher_;
  const Clock& clock_;
  std::chrono::seconds margin_;
  mutable std::mutex mu_;
  std::optional<AccessToken> cached_;  // guarded by mu_
  int fetches_ = 0;                    // guarded by mu_
};

// service_account JSON key: a JWT (iss/sub = client_email, aud = token_uri,
// scope) signed RS256 with private_key, exchanged with grant_type
// urn:ietf:params:oauth:grant-type:jwt-bearer.
Result<std::unique_ptr<TokenFetcher>> MakeServiceAccountFetcher(const std::string& key_json,
                                                                http::HttpTransport* transport,
                                                                const Clock& clock = Env::Default());
// authorized_user JSON (gcloud auth application-default login): refresh_token grant
// at token_uri (default https://oauth2.googleapis.com/token).
Result<std::unique_ptr<TokenFetcher>> MakeAuthorizedUserFetcher(const std::string& json,
                                                                http::HttpTransport* transport,
                                                                const Clock& clock = Env::Default());
// Metadata server at `host` ("169.254.169.254" or host:port). When it is the
// last place searched, `well_known_file` is the gcloud file that was looked
// for first, so an unreachable server's error can name all three places.
std::unique_ptr<TokenFetcher> MakeMetadataFetcher(const std::string& host, http::HttpTransport* transport,
                                                  const Clock& clock = Env::Default(),
                                                  std::string well_known_file = "");

// Starts the message of the error when no place had credentials, so a
// command can recognise it (and point to `--cloud sim`).
inline constexpr const char* kNoCredentials = "no Google Cloud credentials found";

// The OAuth scope requested for service accounts.
inline constexpr const char* kCloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform";

// Application Default Credentials, in Google's order (see the file comment).
// A file that is named but unreadable or malformed is an error, not a fall-through.
// `transport` must outlive the provider.
// `env` gives the variables, the files and the clock; it must outlive the provider.
Result<std::unique_ptr<TokenProvider>> FindDefaultCredentials(http::HttpTransport* transport,
                                                             const Env& env = Env::Default());

// Either JSON credential file by its "type" field.
Result<std::unique_ptr<TokenFetcher>> MakeFetcherFromJson(const std::string& json,
                                                          http::HttpTransport* transport,
                                                          const Clock& clock = Env::Default());

}  // namespace tpu::cloud
