// What went wrong with one API call, in enough detail for the apply executor to
// choose between retry, wait and fail: the HTTP status, the google.rpc status
// name (`error.status`), the reason (`error.errors[].reason` or an ErrorInfo
// detail), the API's own message, and Retry-After. ApiResult<T> is a Result<T>
// that also carries this ApiError when it fails.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "base/status.h"
#include "http/transport.h"

namespace tpu::cloud {

struct ApiError {
  int http_status = 0;       // 0: no response (transport failure, see `transport`)
  std::string status;        // FAILED_PRECONDITION, RESOURCE_EXHAUSTED, NOT_FOUND … (may be empty)
  std::string reason;        // quotaExceeded, rateLimitExceeded, RATE_LIMIT_EXCEEDED … (may be empty)
  std::string message;       // the API's message, verbatim
  std::string call;          // "POST projects/p/locations/l/clusters/c/nodePools"
  std::optional<std::chrono::seconds> retry_after;
  Status transport;          // non-OK when no HTTP response was received
  bool parse_error = false;  // a 2xx whose body did not parse

  bool not_found() const { return http_status == 404; }
  bool already_exists() const { return http_status == 409; }
  bool rate_limited() const { return http_status == 429; }
  // 412 conditionNotMet: an optimistic lock (a metadata fingerprint) was stale;
  // read the resource again and retry with its current fingerprint.
  bool precondition_failed() const { return http_status == 412; }
  bool server_error() const { return http_status >= 500; }
  // GKE's one-operation-per-cluster rule: 400 FAILED_PRECONDITION
  // "Cluster is running incompatible operation …" (or 409 ABORTED seen in the wild).
  bool incompatible_operation() const;
  // 403 with a quota reason or message: not retryable by backoff.
  bool quota_exceeded() const;
  // 429, 5xx, dropped connections/timeouts and incompatible_operation: the
  // executor retries these with backoff (docs/architecture.md, "Apply rules").
  bool retryable() const;

  // The Status this error maps to; message "<call>: <http> <STATUS>: <message>".
  //   404 NotFound · 409 AlreadyExists · 400 FAILED_PRECONDITION and 412 FailedPrecondition
  //   other 400 InvalidArgument · 401/403 PermissionDenied · 403 quota ResourceExhausted
  //   429/5xx/transport Unavailable (timeouts DeadlineExceeded)
  Status ToStatus() const;
};

// Parses a non-2xx response into an ApiError (both the GKE and the Compute
// error shapes; non-JSON bodies keep the first 200 bytes as the message).
ApiError ApiErrorFromResponse(const std::string& call, const http::HttpResponse& response);
ApiError ApiErrorFromTransport(const std::string& call, Status transport);
// A 2xx whose body we could not read: the call happened, but its answer is lost.
ApiError ParseFailure(const std::string& call, const Status& s);
// Retry-After as seconds or an HTTP date; nullopt if absent or unparseable.
std::optional<std::chrono::seconds> ParseRetryAfter(const std::string& value,
                                                    std::chrono::system_clock::time_point now);

template <typename T>
class ApiResult {
 public:
  ApiResult(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  ApiResult(ApiError error) : error_(std::move(error)), status_(error_.ToStatus()) {}  // NOLINT

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  // REQUIRES: !ok().
  const ApiError& error() const { return error_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  // As a plain Result<T>, for callers that only need the Status.
  Result<T> ToResult() && {
    if (ok()) return Result<T>(std::move(*value_));
    return Result<T>(status_);
  }

 private:
  std::optional<T> value_;
  ApiError error_;
  Status status_;
};

}  // namespace tpu::cloud
