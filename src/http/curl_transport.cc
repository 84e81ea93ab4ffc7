// CurlTransport: pooled easy handles over one shared connection cache.
#include "http/curl_transport.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <mutex>

#include <spdlog/spdlog.h>

#include "base/env.h"
#include "base/version.h"

namespace tpu::http {
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

bool IsSuccess(long status) { return status >= 200 && status < 300; }

// Where a body goes: the response, or a 2xx stream's chunk callback.
struct BodySink {
  CURL* curl;
  HttpResponse* response;
  const std::function<bool(const char*, size_t)>* on_chunk;
  bool stopped = false;  // the chunk callback asked to stop
};

size_t WriteBody(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  const size_t len = size * n;
  if (*sink->on_chunk) {
    long status = 0;
    curl_easy_getinfo(sink->curl, CURLINFO_RESPONSE_CODE, &status);
    if (IsSuccess(status)) {
      if ((*sink->on_chunk)(data, len)) return len;
      sink->stopped = true;
      return 0;  // aborts the transfer
    }
  }
  sink->response->body.append(data, len);
  return len;
}

// A cancellable transfer opens its sockets through these, so the token can
// shut them down from another thread (the wake-up), and polls the token in the
// progress callback (the clean stop once woken).
curl_socket_t OpenSocket(void* user, curlsocktype, curl_sockaddr* addr) {
  int fd = ::socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
  if (fd < 0) return CURL_SOCKET_BAD;
  static_cast<CancelToken*>(user)->AddSocket(fd);
  return fd;
}

int CloseSocket(void* user, curl_socket_t fd) {
  static_cast<CancelToken*>(user)->RemoveSocket(fd);
  return ::close(fd);
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<CancelToken*>(user)->cancelled() ? 1 : 0;
}

void SetCancel(CURL* h, CancelToken* cancel) {
  curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, OpenSocket);
  curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, cancel);
  curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, CloseSocket);
  curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, cancel);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, cancel);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  // A connection keeps the close callback it was opened with; one left in the
  // shared cache would call it on a token that may be gone.
  curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
  curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
}

void SetBlob(CURL* curl, CURLoption option, const std::string& pem) {
  curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
  curl_easy_setopt(curl, option, &blob);
}

void SetMethod(CURL* h, const HttpRequest& request) {
  if (request.method == "GET") {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else if (request.method == "HEAD") {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    // A DELETE without a body sends none (no Content-Length: 0, no form content type).
    if (!request.body.empty() || request.method != "DELETE") {
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.c_str());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    }
  }
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
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
  std::string name = Lower(line.substr(0, colon));
  std::string value = line.substr(colon + 1);
  auto first = value.find_first_not_of(" \t");
  auto last = value.find_last_not_of(" \t\r\n");
  value = first == std::string::npos ? "" : value.substr(first, last - first + 1);
  response->headers.emplace_back(std::move(name), std::move(value));
  return size * n;
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
  HttpResponse response;
  if (request.cancel && request.cancel->cancelled()) {
    response.cancelled = true;
    return response;
  }

  CURL* h = static_cast<CURL*>(AcquireHandle());
  curl_slist* headers = nullptr;
  for (const auto& [k, v] : request.headers) headers = curl_slist_append(headers, (k + ": " + v).c_str());
  // libcurl adds "Expect: 100-continue" to large POSTs; Google's frontends do
  // not need it and it costs a round trip.
  headers = curl_slist_append(headers, "Expect:");

  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_USERAGENT, options_.user_agent.empty() ? kUserAgent : options_.user_agent.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM: required with threads
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  // Any encoding curl can decode, except on a stream: a compressor on the
  // server holds back each chunk (a watch event) until it fills a block.
  if (!request.on_chunk) curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
  auto connect = request.connect_timeout.count() > 0 ? request.connect_timeout : options_.connect_timeout;
  // A stream lasts as long as the server keeps it open (a watch's timeoutSeconds).
  auto total = request.timeout.count() > 0 ? request.timeout
               : request.on_chunk          ? std::chrono::milliseconds(0)
                                           : options_.total_timeout;
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect.count()));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(total.count()));
  SetTls(h);
  SetMethod(h, request);
  BodySink sink{h, &response, &request.on_chunk};
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &WriteBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &WriteHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &response);
  if (request.cancel) SetCancel(h, request.cancel);

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
  response.status = static_cast<int>(status);
  if (request.cancel && request.cancel->cancelled()) {
    response.cancelled = true;
    return response;
  }
  // The caller ended a stream, or the server closed one mid-chunk: its end, not an error.
  const bool stream_ended = request.on_chunk && IsSuccess(status) &&
                            ((rc == CURLE_WRITE_ERROR && sink.stopped) || rc == CURLE_PARTIAL_FILE);

  // URLs carry no secrets here (tokens travel in headers and bodies, never logged).
  if (rc != CURLE_OK && !stream_ended) {
    spdlog::debug("http #{} {} {} failed after {} ms: {}", id, request.method, request.url, ms,
                  curl_easy_strerror(rc));
    std::string what = request.method + " " + request.url + ": " + curl_easy_strerror(rc);
    if (rc == CURLE_OPERATION_TIMEDOUT) return Status::DeadlineExceeded(what);
    return Status::Unavailable(what);
  }
  spdlog::debug("http #{} {} {} -> {} ({} ms, {} bytes{})", id, request.method, request.url, status, ms,
                response.body.size(), connects ? ", new connection" : "");
  return response;
}

void CurlTransport::SetTls(void* handle) const {
  auto* h = static_cast<CURL*>(handle);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, options_.insecure ? 0L : 1L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, options_.insecure ? 0L : 2L);
  if (!options_.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, options_.ca_file.c_str());
  if (!options_.ca_pem.empty()) SetBlob(h, CURLOPT_CAINFO_BLOB, options_.ca_pem);
  if (!options_.client_cert_file.empty()) curl_easy_setopt(h, CURLOPT_SSLCERT, options_.client_cert_file.c_str());
  if (!options_.client_key_file.empty()) curl_easy_setopt(h, CURLOPT_SSLKEY, options_.client_key_file.c_str());
  if (!options_.client_cert_pem.empty()) SetBlob(h, CURLOPT_SSLCERT_BLOB, options_.client_cert_pem);
  if (!options_.client_key_pem.empty()) SetBlob(h, CURLOPT_SSLKEY_BLOB, options_.client_key_pem);
}

}  // namespace tpu::http
