// One authorised JSON call to a Google REST API: adds the bearer token and
// JSON headers, sends through the transport, counts the call, and turns a
// non-2xx response into an ApiError. Shared by GkeClient and ComputeClient.
//
// Thread-safe if its transport and token provider are (both ours are).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cloud/api_error.h"
#include "cloud/credentials.h"
#include "http/transport.h"

namespace tpu::cloud {

// Counts API calls so tests can assert bounds ("≤ 4 reads per project", "zero
// mutations") and the daemon can export them. Thread-safe.
class CallCounter {
 public:
  // A GET is a read, anything else a mutation, unless `read` says otherwise
  // (a POST that changes nothing, such as listManagedInstances).
  void Record(const std::string& method, int http_status) { Record(method, http_status, method == "GET"); }
  void Record(const std::string& method, int http_status, bool read);
  int64_t reads() const { return reads_.load(); }      // GET and read-only POSTs
  int64_t mutations() const { return mutations_.load(); }  // everything else
  int64_t total() const { return reads() + mutations(); }
  // "GET 200" → count, for metrics (tpu_provisioner_api_calls{method,code}).
  std::map<std::string, int64_t> ByMethodAndCode() const;
  void Reset();

 private:
  std::atomic<int64_t> reads_{0};
  std::atomic<int64_t> mutations_{0};
  mutable std::mutex mu_;
  std::map<std::string, int64_t> by_method_code_;  // guarded by mu_
};

// One call made ready to send: the request with its token and headers, the
// transport to send it through, and what turns the transport's answer into the
// call's result (counting the call). The apply sends it on the event loop and
// finishes it on a worker, so no thread waits for the network
// (docs/architecture.md, "Threads"); Send() does both on the calling thread.
template <typename T>
struct PreparedCall {
  http::HttpTransport* transport = nullptr;
  http::HttpRequest request;
  std::function<ApiResult<T>(Result<http::HttpResponse>)> finish;

  ApiResult<T> Send() const { return finish(transport->Send(request)); }

  // The same call with its result passed through `f` (JSON → Operation).
  template <typename U>
  PreparedCall<U> Then(std::function<ApiResult<U>(ApiResult<T>)> f) && {
    return {transport, std::move(request),
            [finish = std::move(finish), f = std::move(f)](Result<http::HttpResponse> r) { return f(finish(std::move(r))); }};
  }
};

// A prepared call, or why it could not be prepared (no credentials).
template <typename T>
using Prepared = ApiResult<PreparedCall<T>>;

template <typename T>
ApiResult<T> SendPrepared(const Prepared<T>& call) {
  if (!call.ok()) return call.error();
  return call->Send();
}

// `call` with its result passed through `f`.
template <typename U, typename T>
Prepared<U> Then(Prepared<T> call, std::function<ApiResult<U>(ApiResult<T>)> f) {
  if (!call.ok()) return call.error();
  return std::move(call.value()).template Then<U>(std::move(f));
}

class ApiCaller {
 public:
  // All pointers must outlive the caller. `counter` may be null.
  ApiCaller(http::HttpTransport* transport, TokenProvider* tokens, CallCounter* counter)
      : transport_(transport), tokens_(tokens), counter_(counter) {}

  // `url` is absolute; `what` names the call in errors ("GET projects/p/…").
  // A 2xx with an empty body yields an empty JSON object.
  ApiResult<nlohmann::json> Call(const std::string& method, const std::string& url,
                                 const std::optional<nlohmann::json>& body = std::nullopt);
  // A GET like Call's, with the 2xx body returned as received (empty when the
  // API sent none) for a caller that parses it itself: the list responses,
  // read straight into our types (list_reader.h).
  ApiResult<std::string> CallRaw(const std::string& url);
  // CallRaw prepared, for a caller that sends it on an event loop and parses
  // the body off the loop thread (the refresh, the apply's batched polls).
  Prepared<std::string> PrepareRaw(const std::string& url);

  // What Call() does, in two halves: the request with token and headers, and
  // the finish that counts the call and parses its answer.
  Prepared<nlohmann::json> Prepare(const std::string& method, const std::string& url,
                                   const std::optional<nlohmann::json>& body = std::nullopt);

  CallCounter* counter() const { return counter_; }

 private:
  // What every call shares: the request with token and headers, and the
  // finish that counts the call and turns a non-2xx (or no response) into an
  // ApiError. `body` nullopt: none sent.
  Prepared<http::HttpResponse> PrepareExchange(const std::string& method, const std::string& url,
                                               const std::optional<std::string>& body);

  http::HttpTransport* transport_;
  TokenProvider* tokens_;
  CallCounter* counter_;
};

// "https://h/compute/v1/projects/p/zones/z" → "projects/p/zones/z": the part of a
// URL worth putting in an error message.
std::string CallName(const std::string& method, const std::string& url);

// Percent-encodes a query parameter value.
std::string UrlEncode(const std::string& value);

}  // namespace tpu::cloud
