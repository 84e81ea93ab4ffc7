// The HTTP seam between the API clients (Google Cloud, Kubernetes, webhooks)
// and the network. Clients build an HttpRequest and hand it to an
// HttpTransport; production uses CurlMultiLoop (curl_multi.h) for the Google
// APIs and CurlTransport (curl_transport.h) for Kubernetes and webhooks; tests
// use them against loopback servers or wrap them to inject faults. A transport failure (no
// response at all) is a non-OK Result; any HTTP response, 4xx and 5xx included,
// is an OK Result the caller classifies.
//
// Thread safety: every HttpTransport must allow concurrent Send() and Submit() calls.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "http/cancel.h"

namespace tpu::http {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  HttpHeaders headers;   // values never logged (they may hold a bearer token)
  std::string body;      // never logged
  // Whole-request deadline; zero means the transport's default.
  std::chrono::milliseconds timeout{0};
  // Connect deadline; zero means the transport's default. The metadata-server
  // probe uses a short one so machines off GCE fail fast.
  std::chrono::milliseconds connect_timeout{0};
  // Streaming (a Kubernetes watch): each chunk of a 2xx body goes here instead
  // of into HttpResponse::body, as it arrives; returning false ends the
  // transfer and Send() returns the response so far. A server that closes a
  // 2xx stream mid-chunk has ended it; that is not an error. There is no
  // whole-request deadline unless `timeout` sets one.
  std::function<bool(const char*, size_t)> on_chunk;
  // When set, Cancel() on it from another thread ends the transfer at once
  // and Send() returns a response with `cancelled` set. Such a request never
  // shares its connection, so the token's sockets are its own.
  CancelToken* cancel = nullptr;
};

struct HttpResponse {
  int status = 0;
  HttpHeaders headers;  // names lower-cased
  std::string body;
  bool cancelled = false;  // ended by HttpRequest::cancel; status and body mean nothing

  // The first header with that name (case-insensitive), if any.
  std::optional<std::string> Header(std::string_view name) const;
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // Sends one request and waits for its response. Errors:
  //   Unavailable       connection refused/reset, DNS failure, TLS failure
  //   DeadlineExceeded  connect or total timeout
  //   InvalidArgument   a URL the transport refuses (plain http to a remote host)
  virtual Result<HttpResponse> Send(const HttpRequest& request) = 0;

  using Done = std::function<void(Result<HttpResponse>)>;
  // Sends one request and hands `done` what Send() would have returned. This
  // default sends on the calling thread and calls `done` there before it
  // returns; an event-loop transport (CurlMultiLoop, curl_multi.h) returns at
  // once and calls `done` later on its loop thread. So `done` must be cheap and
  // must not block: it queues the real work for another thread.
  virtual void Submit(HttpRequest request, Done done) { done(Send(request)); }

  // Runs `fn` once, `delay` from now, where Submit's `done` callbacks run, so
  // a caller can gather requests made close together and send them as one
  // (cloud/operation_watch.h). This default has no loop to wait on: it runs
  // `fn` at once, on the calling thread, whatever `delay` is.
  virtual void RunAfter(std::chrono::milliseconds delay, std::function<void()> fn) {
    (void)delay;
    fn();
  }
  // True when RunAfter really waits (an event loop); false when it runs its
  // function at once, so nothing may be put off with it.
  virtual bool HasEventLoop() const { return false; }
};

}  // namespace tpu::http
