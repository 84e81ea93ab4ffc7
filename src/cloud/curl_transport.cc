// CurlTransport: pooled easy handles over one shared connection cache.
#include "cloud/curl_transport.h"

#include <arpa/inet.h>
#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <mutex>

#include <spdlog/spdlog.h>

#include "base/env.h"
#include "base/version.h"

namespace tpu::cloud {
namespace {

constexpr const char* kUserAgent = "tpu-provisioner/" TPU_PROVISIONER_VERSION;
// The shared connection cache keeps libcurl's default of 5 otherwise: with
// dozens of workers nearly every call opened (and TLS-handshook) a new one.
constexpr long kMaxConnects = 128;

void GlobalInitOnce() {
  // curl_global_init is not thread-safe; do it once before any handle exists.
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t WriteBody(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

size_t WriteHeader(char* data, size_t size, size_t n, void* user) {
  auto* response = static_cast<HttpResponse*>(user);
  std::string line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    // A new status line (after a 100 Continue or a redirect): start over.
    response->headers.clear();
    return size * n;
  }
  auto colon = line.find(':');
  if (colon == std::string::npos) return size * n;
  std::string name = line.substr(0, colon);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string value = line.substr(colon + 1);
  auto first = value.find_first_not_of(" \t");
  auto last = value.find_last_not_of(" \t\r\n");
  value = first == std::string::npos ? "" : value.substr(first, last - first + 1);
  response->headers.emplace_back(std::move(name), std::move(value));
  return size * n;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

// One CURLSH shared by every handle of a transport: connections, DNS and TLS
// sessions. libcurl requires lock callbacks when handles run on several threads.
struct CurlTransport::Shared {
  CURLSH* share = nullptr;
  std::mutex locks[CURL_LOCK_DATA_LAST];

  static void Lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
    static_cast<Shared*>(user)->locks[data].lock();
  }
  static void Unlock(CURL*, curl_lock_data data, void* user) {
    static_cast<Shared*>(user)->locks[data].unlock();
  }

  Shared() {
    share = curl_share_init();
    curl_share_setopt(share, CURLSHOPT_LOCKFUNC, &Shared::Lock);
    curl_share_setopt(share, CURLSHOPT_UNLOCKFUNC, &Shared::Unlock);
    curl_share_setopt(share, CURLSHOPT_USERDATA, this);
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
  }
  ~Shared() { curl_share_cleanup(share); }
};

std::string UrlHost(const std::string& url) {
  auto scheme = url.find("://");
  if (scheme == std::string::npos) return "";
  size_t start = scheme + 3;
  auto at = url.find('@', start);
  auto slash = url.find('/', start);
  if (at != std::string::npos && (slash == std::string::npos || at < slash)) start = at + 1;
  if (start < url.size() && url[start] == '[') {
    auto close = url.find(']', start);
    if (close == std::string::npos) return "";
    return url.substr(start + 1, close - start - 1);
  }
  size_t end = url.find_first_of(":/?#", start);
  return Lower(url.substr(start, end == std::string::npos ? std::string::npos : end - start));
}

bool IsPlainHttpAllowedHost(const std::string& raw) {
  std::string host = Lower(raw);
  if (host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127 || host == "169.254.169.254";
  }
  return host == "169.254.169.254" || host == "metadata.google.internal" || host == "metadata";
}

CurlTransport::CurlTransport(CurlTransportOptions options)
    : options_(std::move(options)) {
  GlobalInitOnce();
  shared_ = std::make_unique<Shared>();
  if (options_.insecure) {
    spdlog::warn("TLS verification is OFF and plain http is allowed to any host (--insecure-skip-tls-verify); "
                 "use only against a test endpoint");
  }
}

CurlTransport::~CurlTransport() {
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* CurlTransport::AcquireHandle() {
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!idle_.empty()) {
      void* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  CURL* h = curl_easy_init();
  curl_easy_setopt(h, CURLOPT_SHARE, shared_->share);
  curl_easy_setopt(h, CURLOPT_MAXCONNECTS, kMaxConnects);
  return h;
}

void CurlTransport::ReleaseHandle(void* handle) {
  auto* h = static_cast<CURL*>(handle);
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (idle_.size() < options_.max_idle_handles) {
      curl_easy_reset(h);  // keeps the connection cache, drops per-request options
      curl_easy_setopt(h, CURLOPT_SHARE, shared_->share);
      curl_easy_setopt(h, CURLOPT_MAXCONNECTS, kMaxConnects);
      idle_.push_back(h);
      return;
    }
  }
  curl_easy_cleanup(h);
}

Result<HttpResponse> CurlTransport::Send(const HttpRequest& request) {
  const int64_t id = next_request_id_.fetch_add(1);
  const bool plain_http = request.url.rfind("http://", 0) == 0;
  if (!plain_http && request.url.rfind("https://", 0) != 0) {
    return Status::InvalidArgument("unsupported URL scheme: " + request.url);
  }
  if (plain_http && !options_.insecure && !IsPlainHttpAllowedHost(UrlHost(request.url))) {
    return Status::InvalidArgument("refusing plain http to non-loopback host " + UrlHost(request.url) +
                                   " (use https, or --insecure-skip-tls-verify for a test endpoint)");
  }

  CURL* h = static_cast<CURL*>(AcquireHandle());
  HttpResponse response;
  curl_slist* headers = nullptr;
  for (const auto& [k, v] : request.headers) headers = curl_slist_append(headers, (k + ": " + v).c_str());
  // libcurl adds "Expect: 100-continue" to large POSTs; Google's frontends do
  // not need it and it costs a round trip.
  headers = curl_slist_append(headers, "Expect:");

  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_USERAGENT, kUserAgent);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM: required with threads
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // any encoding curl can decode
  auto connect = request.connect_timeout.count() > 0 ? request.connect_timeout : options_.connect_timeout;
  auto total = request.timeout.count() > 0 ? request.timeout : options_.total_timeout;
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect.count()));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(total.count()));
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, options_.insecure ? 0L : 1L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, options_.insecure ? 0L : 2L);
  if (!options_.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, options_.ca_file.c_str());
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &WriteBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &WriteHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &response);

  if (request.method == "GET") {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else {
    if (request.method == "HEAD") {
      curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else {
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.c_str());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    }
  }

  auto start = Env::Default().Now();
  CURLcode rc = curl_easy_perform(h);
  long status = 0;
  long connects = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects);
  connections_opened_.fetch_add(connects);
  curl_slist_free_all(headers);
  ReleaseHandle(h);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Env::Default().Now() - start).count();

  // URLs carry no secrets here (tokens travel in headers and bodies, never logged).
  if (rc != CURLE_OK) {
    spdlog::debug("http #{} {} {} failed after {} ms: {}", id, request.method, request.url, ms,
                  curl_easy_strerror(rc));
    std::string what = request.method + " " + request.url + ": " + curl_easy_strerror(rc);
    if (rc == CURLE_OPERATION_TIMEDOUT) return Status::DeadlineExceeded(what);
    return Status::Unavailable(what);
  }
  response.status = static_cast<int>(status);
  spdlog::debug("http #{} {} {} -> {} ({} ms, {} bytes{})", id, request.method, request.url, status, ms,
                response.body.size(), connects ? ", new connection" : "");
  return response;
}

}  // namespace tpu::cloud
