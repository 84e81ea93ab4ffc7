// The one place an HttpRequest becomes a libcurl easy handle's options and a
// finished transfer becomes a Result<HttpResponse>: shared by CurlTransport
// (one blocking transfer per calling thread) and CurlMultiLoop (every transfer
// on one event-loop thread), so both have the same rules — TLS verified, plain
// http only to loopback and the metadata server, timeouts, CancelToken, the
// streaming body — and the same error mapping (transport.h).
//
// Internal to src/http.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include <curl/curl.h>

#include "http/curl_transport.h"
#include "http/transport.h"

namespace tpu::http::internal {

// curl_global_init, once per process, before any handle exists.
void GlobalInitOnce();

// The scheme and plain-http rule: OK, or InvalidArgument naming the host.
Status CheckUrl(const HttpRequest& request, bool insecure);

// One transfer's state while libcurl runs it. The request must outlive it.
struct Transfer {
  explicit Transfer(const HttpRequest* r) : request(r) {}
  ~Transfer();
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;

  const HttpRequest* request;
  CURL* curl = nullptr;
  HttpResponse response;
  curl_slist* headers = nullptr;
  bool stopped = false;  // the chunk callback asked to stop
  int64_t id = 0;        // for debug logs
  std::chrono::steady_clock::time_point start{};
};

// Sets every option of `t->request` on `h`, a fresh or reset handle.
void SetUp(CURL* h, Transfer* t, const CurlTransportOptions& options);

// The outcome of a transfer libcurl finished with `rc`; adds the
// connections it opened to *connects.
Result<HttpResponse> Finish(CURL* h, CURLcode rc, Transfer* t, int64_t* connects);

}  // namespace tpu::http::internal
