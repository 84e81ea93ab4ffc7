// Application Default Credentials: the token fetchers, the cache, and the
// search order.
#include "cloud/credentials.h"

#include <cctype>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cloud/api_caller.h"  // UrlEncode
#include "cloud/api_error.h"
#include "cloud/jwt.h"

namespace tpu::cloud {
namespace {

constexpr const char* kDefaultTokenUri = "https://oauth2.googleapis.com/token";
constexpr const char* kDefaultMetadataHost = "169.254.169.254";
// Off GCE the metadata address black-holes; give up quickly.
constexpr std::chrono::milliseconds kMetadataConnectTimeout{2'000};
constexpr std::chrono::milliseconds kTokenTimeout{30'000};

// Parses {"access_token", "expires_in"} from a token endpoint's response.
Result<AccessToken> ParseTokenResponse(const std::string& what, const http::HttpResponse& response,
                                       std::chrono::system_clock::time_point now) {
  if (response.status != 200) {
    return ApiErrorFromResponse(what, response).ToStatus();
  }
  auto j = nlohmann::json::parse(response.body, nullptr, false);
  if (!j.is_object() || !j.contains("access_token") || !j["access_token"].is_string()) {
    return Status::PermissionDenied(what + ": response has no access_token");
  }
  AccessToken token;
  token.value = j["access_token"];
  int64_t expires_in = 3600;
  if (j.contains("expires_in")) {
    if (j["expires_in"].is_number_integer()) expires_in = j["expires_in"];
    else if (j["expires_in"].is_string()) expires_in = std::atoll(j["expires_in"].get<std::string>().c_str());
  }
  token.expiry = now + std::chrono::seconds(expires_in);
  return token;
}

Result<AccessToken> PostForm(http::HttpTransport* transport, const std::string& what, const std::string& url,
                             const std::string& form, std::chrono::system_clock::time_point now) {
  http::HttpRequest request;
  request.method = "POST";
  request.url = url;
  request.headers = {{"Content-Type", "application/x-www-form-urlencoded"}, {"Accept", "application/json"}};
  request.body = form;
  request.timeout = kTokenTimeout;
  auto response = transport->Send(request);
  if (!response.ok()) return response.status().WithContext(what);
  return ParseTokenResponse(what, *response, now);
}

std::string StringField(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

class ServiceAccountFetcher : public TokenFetcher {
 public:
  ServiceAccountFetcher(std::string email, std::string key, std::string key_id, std::string token_uri,
                        http::HttpTransport* transport, const Clock& clock)
      : email_(std::move(email)), key_(std::move(key)), key_id_(std::move(key_id)),
        token_uri_(std::move(token_uri)), transport_(transport), clock_(clock) {}

  Result<AccessToken> Fetch() override {
    auto now = clock_.WallNow();
    int64_t iat = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    nlohmann::json claims = {{"iss", email_}, {"sub", email_},   {"aud", token_uri_},
                             {"scope", kCloudPlatformScope}, {"iat", iat}, {"exp", iat + 3600}};
    auto jwt = SignJwtRs256(claims, key_, key_id_);
    if (!jwt.ok()) return jwt.status().WithContext("service account " + email_);
    std::string form = "grant_type=" + UrlEncode("urn:ietf:params:oauth:grant-type:jwt-bearer") +
                       "&assertion=" + UrlEncode(*jwt);
    return PostForm(transport_, "token exchange for " + email_, token_uri_, form, now);
  }
  std::string Describe() const override { return "service_account " + email_; }

 private:
  std::string email_, key_, key_id_, token_uri_;
  http::HttpTransport* transport_;
  const Clock& clock_;
};

class AuthorizedUserFetcher : public TokenFetcher {
 public:
  AuthorizedUserFetcher(std::string client_id, std::string client_secret, std::string refresh_token,
                        std::string token_uri, http::HttpTransport* transport, const Clock& clock)
      : client_id_(std::move(client_id)), client_secret_(std::move(client_secret)),
        refresh_token_(std::move(refresh_token)), token_uri_(std::move(token_uri)),
        transport_(transport), clock_(clock) {}

  Result<AccessToken> Fetch() override {
    std::string form = "grant_type=refresh_token&client_id=" + UrlEncode(client_id_) +
                       "&client_secret=" + UrlEncode(client_secret_) +
                       "&refresh_token=" + UrlEncode(refresh_token_);
    return PostForm(transport_, "refresh-token grant", token_uri_, form, clock_.WallNow());
  }
  std::string Describe() const override { return "authorized_user " + client_id_; }

 private:
  std::string client_id_, client_secret_, refresh_token_, token_uri_;
  http::HttpTransport* transport_;
  const Clock& clock_;
};

class MetadataFetcher : public TokenFetcher {
 public:
  MetadataFetcher(std::string host, http::HttpTransport* transport, const Clock& clock, std::string well_known_file)
      : host_(std::move(host)), well_known_file_(std::move(well_known_file)), transport_(transport),
        clock_(clock) {}

  Result<AccessToken> Fetch() override {
    http::HttpRequest request;
    request.url = "http://" + host_ + "/computeMetadata/v1/instance/service-accounts/default/token";
    request.headers = {{"Metadata-Flavor", "Google"}};
    request.connect_timeout = kMetadataConnectTimeout;
    request.timeout = kTokenTimeout;
    auto now = clock_.WallNow();
    auto response = transport_->Send(request);
    if (!response.ok()) {
      std::string file = well_known_file_.empty() ? "" : " " + well_known_file_;
      return Status::PermissionDenied(
          std::string(kNoCredentials) + "; looked in: (1) GOOGLE_APPLICATION_CREDENTIALS: unset; "
          "(2) the gcloud application-default credentials file" + file +
          ": absent (`gcloud auth application-default login` writes it); (3) the GCE metadata "
          "server at " + host_ + ": unreachable (" + response.status().message() + ")");
    }
    return ParseTokenResponse("metadata server " + host_, *response, now);
  }
  std::string Describe() const override { return "metadata server " + host_; }

 private:
  std::string host_;
  std::string well_known_file_;
  http::HttpTransport* transport_;
  const Clock& clock_;
};


}  // namespace

CachingTokenProvider::CachingTokenProvider(std::unique_ptr<TokenFetcher> fetcher, const Clock& clock,
                                           std::chrono::seconds refresh_margin)
    : fetcher_(std::move(fetcher)), clock_(clock), margin_(refresh_margin) {}

Result<std::string> CachingTokenProvider::Token() {
  // Holding the lock across the fetch makes concurrent callers wait for one
  // exchange instead of each starting their own.
  std::lock_guard<std::mutex> lock(mu_);
  if (cached_ && clock_.WallNow() + margin_ < cached_->expiry) return cached_->value;
  auto token = fetcher_->Fetch();
  ++fetches_;
  if (!token.ok()) return token.status();
  cached_ = *token;
  spdlog::debug("new access token from {}", fetcher_->Describe());
  return cached_->value;
}

int CachingTokenProvider::fetches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fetches_;
}

Result<std::unique_ptr<TokenFetcher>> MakeServiceAccountFetcher(const std::string& key_json,
                                                                http::HttpTransport* transport, const Clock& clock) {
  auto j = nlohmann::json::parse(key_json, nullptr, false);
  if (!j.is_object()) return Status::InvalidArgument("service account key is not a JSON object");
  std::string email = StringField(j, "client_email");
  std::string key = StringField(j, "private_key");
  if (email.empty() || key.empty()) {
    return Status::InvalidArgument("service account key needs client_email and private_key");
  }
  std::string token_uri = StringField(j, "token_uri");
  if (token_uri.empty()) token_uri = kDefaultTokenUri;
  return std::unique_ptr<TokenFetcher>(new ServiceAccountFetcher(
      email, key, StringField(j, "private_key_id"), token_uri, transport, clock));
}

Result<std::unique_ptr<TokenFetcher>> MakeAuthorizedUserFetcher(const std::string& json,
                                                                http::HttpTransport* transport, const Clock& clock) {
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (!j.is_object()) return Status::InvalidArgument("authorized_user credentials are not a JSON object");
  std::string id = StringField(j, "client_id");
  std::string secret = StringField(j, "client_secret");
  std::string refresh = StringField(j, "refresh_token");
  if (id.empty() || secret.empty() || refresh.empty()) {
    return Status::InvalidArgument("authorized_user credentials need client_id, client_secret and refresh_token");
  }
  std::string token_uri = StringField(j, "token_uri");
  if (token_uri.empty()) token_uri = kDefaultTokenUri;
  return std::unique_ptr<TokenFetcher>(
      new AuthorizedUserFetcher(id, secret, refresh, token_uri, transport, clock));
}

std::unique_ptr<TokenFetcher> MakeMetadataFetcher(const std::string& host, http::HttpTransport* transport,
                                                  const Clock& clock, std::string well_known_file) {
  return std::make_unique<MetadataFetcher>(host, transport, clock, std::move(well_known_file));
}

Result<std::unique_ptr<TokenFetcher>> MakeFetcherFromJson(const std::string& json, http::HttpTransport* transport,
                                                          const Clock& clock) {
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (!j.is_object()) return Status::InvalidArgument("credentials file is not a JSON object");
  std::string type = StringField(j, "type");
  if (type == "service_account") return MakeServiceAccountFetcher(json, transport, clock);
  if (type == "authorized_user") return MakeAuthorizedUserFetcher(json, transport, clock);
  return Status::InvalidArgument("unsupported credentials type \"" + type +
                                 "\" (want service_account or authorized_user)");
}

Result<std::string> TokenFileProvider::Token() {
  auto text = env_.ReadFile(path_);
  if (!text.ok()) return text.status().WithContext("CLOUDSDK_AUTH_ACCESS_TOKEN_FILE");
  std::string token = TrimSpace(*text);
  if (token.empty()) return Status::InvalidArgument("CLOUDSDK_AUTH_ACCESS_TOKEN_FILE " + path_ + ": empty");
  return token;
}

Result<std::unique_ptr<TokenProvider>> FindDefaultCredentials(http::HttpTransport* transport, const Env& env) {
  const Clock& clock = env;
  auto from_file = [&](const std::string& path, const char* source) -> Result<std::unique_ptr<TokenProvider>> {
    auto text = env.ReadFile(path);
    if (!text.ok()) return text.status().WithContext(source);
    auto fetcher = MakeFetcherFromJson(*text, transport, clock);
    if (!fetcher.ok()) return fetcher.status().WithContext(std::string(source) + " " + path);
    spdlog::info("credentials: {} from {}", (*fetcher)->Describe(), path);
    return std::unique_ptr<TokenProvider>(new CachingTokenProvider(std::move(*fetcher), clock));
  };

  // 0. gcloud's auth/access_token_file: a token minted elsewhere (CI's Workload
  // Identity Federation), re-read on every call so a refreshed file is used.
  if (auto path = env.Var("CLOUDSDK_AUTH_ACCESS_TOKEN_FILE"); path && !path->empty()) {
    auto first = env.ReadFile(*path);
    if (!first.ok()) return first.status().WithContext("CLOUDSDK_AUTH_ACCESS_TOKEN_FILE");
    spdlog::info("credentials: access token file {}", *path);
    return std::unique_ptr<TokenProvider>(new TokenFileProvider(*path, env));
  }
  // 1. An explicitly named file: an error in it is an error, never a fall-through.
  if (auto path = env.Var("GOOGLE_APPLICATION_CREDENTIALS"); path && !path->empty()) {
    return from_file(*path, "GOOGLE_APPLICATION_CREDENTIALS");
  }
  // 2. gcloud's well-known file, if present.
  std::string dir, well_known;
  if (auto config = env.Var("CLOUDSDK_CONFIG"); config && !config->empty()) {
    dir = *config;
  } else if (auto home = env.Var("HOME"); home && !home->empty()) {
    dir = *home + "/.config/gcloud";
  }
  if (!dir.empty()) {
    std::string path = dir + "/application_default_credentials.json";
    well_known = path;
    // Present means readable or not NotFound: a file that exists but cannot be read is an error.
    if (env.ReadFile(path).status().code() != Status::Code::kNotFound)
      return from_file(path, "gcloud application-default credentials");
  }
  // 3. The metadata server; reachability is found out on the first token.
  std::string host = kDefaultMetadataHost;
  if (auto h = env.Var("GCE_METADATA_HOST"); h && !h->empty()) host = *h;
  spdlog::info("credentials: metadata server {}", host);
  return std::unique_ptr<TokenProvider>(
      new CachingTokenProvider(MakeMetadataFetcher(host, transport, clock, well_known), clock));
}

}  // namespace tpu::cloud
