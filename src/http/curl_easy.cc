// Easy-handle setup and result mapping shared by CurlTransport and CurlMultiLoop.
#include "http/curl_easy.h"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <mutex>

#include <spdlog/spdlog.h>

#include "base/env.h"
#include "base/version.h"

namespace tpu::http {
namespace {

constexpr const char* kUserAgent = "tpu-provisioner/" TPU_PROVISIONER_VERSION;

bool IsSuccess(long status) { return status >= 200 && status < 300; }

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The body goes to the response, or to a 2xx stream's chunk callback.
size_t WriteBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<internal::Transfer*>(user);
  const size_t len = size * n;
  if (t->request->on_chunk) {
    long status = 0;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    if (IsSuccess(status)) {
      if (t->request->on_chunk(data, len)) return len;
      t->stopped = true;
      return 0;  // aborts the transfer
    }
  }
  t->response.body.append(data, len);
  return len;
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

void SetTls(CURL* h, const CurlTransportOptions& o) {
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, o.insecure ? 0L : 1L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, o.insecure ? 0L : 2L);
  if (!o.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, o.ca_file.c_str());
  if (!o.ca_pem.empty()) SetBlob(h, CURLOPT_CAINFO_BLOB, o.ca_pem);
  if (!o.client_cert_file.empty()) curl_easy_setopt(h, CURLOPT_SSLCERT, o.client_cert_file.c_str());
  if (!o.client_key_file.empty()) curl_easy_setopt(h, CURLOPT_SSLKEY, o.client_key_file.c_str());
  if (!o.client_cert_pem.empty()) SetBlob(h, CURLOPT_SSLCERT_BLOB, o.client_cert_pem);
  if (!o.client_key_pem.empty()) SetBlob(h, CURLOPT_SSLKEY_BLOB, o.client_key_pem);
}

}  // namespace

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

namespace internal {

void GlobalInitOnce() {
  // curl_global_init is not thread-safe; do it once before any handle exists.
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

Status CheckUrl(const HttpRequest& request, bool insecure) {
  const bool plain_http = request.url.rfind("http://", 0) == 0;
  if (!plain_http && request.url.rfind("https://", 0) != 0) {
    return Status::InvalidArgument("unsupported URL scheme: " + request.url);
  }
  if (plain_http && !insecure && !IsPlainHttpAllowedHost(UrlHost(request.url))) {
    return Status::InvalidArgument("refusing plain http to non-loopback host " + UrlHost(request.url) +
                                   " (use https, or --insecure-skip-tls-verify for a test endpoint)");
  }
  return Status::OK();
}

Transfer::~Transfer() { curl_slist_free_all(headers); }

void SetUp(CURL* h, Transfer* t, const CurlTransportOptions& options) {
  const HttpRequest& request = *t->request;
  t->curl = h;
  t->start = Env::Default().Now();
  for (const auto& [k, v] : request.headers) t->headers = curl_slist_append(t->headers, (k + ": " + v).c_str());
  // libcurl adds "Expect: 100-continue" to large POSTs; Google's frontends do
  // not need it and it costs a round trip.
  t->headers = curl_slist_append(t->headers, "Expect:");

  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_USERAGENT, options.user_agent.empty() ? kUserAgent : options.user_agent.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, t->headers);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM: required with threads
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  // Any encoding curl can decode, except on a stream: a compressor on the
  // server holds back each chunk (a watch event) until it fills a block.
  if (!request.on_chunk) curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
  auto connect = request.connect_timeout.count() > 0 ? request.connect_timeout : options.connect_timeout;
  // A stream lasts as long as the server keeps it open (a watch's timeoutSeconds).
  auto total = request.timeout.count() > 0 ? request.timeout
               : request.on_chunk          ? std::chrono::milliseconds(0)
                                           : options.total_timeout;
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect.count()));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(total.count()));
  SetTls(h, options);
  SetMethod(h, request);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &WriteBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, t);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &WriteHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &t->response);
  if (request.cancel) SetCancel(h, request.cancel);
}

Result<HttpResponse> Finish(CURL* h, CURLcode rc, Transfer* t, int64_t* connects) {
  const HttpRequest& request = *t->request;
  long status = 0;
  long opened = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &opened);
  *connects += opened;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Env::Default().Now() - t->start).count();
  t->response.status = static_cast<int>(status);
  if (request.cancel && request.cancel->cancelled()) {
    t->response.cancelled = true;
    return std::move(t->response);
  }
  // The caller ended a stream, or the server closed one mid-chunk: its end, not an error.
  const bool stream_ended = request.on_chunk && IsSuccess(status) &&
                            ((rc == CURLE_WRITE_ERROR && t->stopped) || rc == CURLE_PARTIAL_FILE);

  // URLs carry no secrets here (tokens travel in headers and bodies, never logged).
  if (rc != CURLE_OK && !stream_ended) {
    spdlog::debug("http #{} {} {} failed after {} ms: {}", t->id, request.method, request.url, ms,
                  curl_easy_strerror(rc));
    std::string what = request.method + " " + request.url + ": " + curl_easy_strerror(rc);
    if (rc == CURLE_OPERATION_TIMEDOUT) return Status::DeadlineExceeded(what);
    return Status::Unavailable(what);
  }
  spdlog::debug("http #{} {} {} -> {} ({} ms, {} bytes{})", t->id, request.method, request.url, status, ms,
                t->response.body.size(), opened ? ", new connection" : "");
  return std::move(t->response);
}

}  // namespace internal
}  // namespace tpu::http
