// Parsing Google API error bodies and mapping them onto Status codes.
#include "cloud/api_error.h"

#include <algorithm>
#include <cctype>
#include <ctime>

#include <nlohmann/json.hpp>

#include "base/env.h"

namespace tpu::cloud {
namespace {

bool Contains(const std::string& haystack, const char* needle) {
  std::string h = haystack;
  std::string n = needle;
  std::transform(h.begin(), h.end(), h.begin(), [](unsigned char c) { return std::tolower(c); });
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  return h.find(n) != std::string::npos;
}

std::string StatusNameForHttp(int http) {
  switch (http) {
    case 400: return "INVALID_ARGUMENT";
    case 401: return "UNAUTHENTICATED";
    case 403: return "PERMISSION_DENIED";
    case 404: return "NOT_FOUND";
    case 409: return "ALREADY_EXISTS";
    case 412: return "FAILED_PRECONDITION";
    case 429: return "RESOURCE_EXHAUSTED";
    case 503: return "UNAVAILABLE";
    default: return http >= 500 ? "INTERNAL" : "";
  }
}

}  // namespace

bool ApiError::incompatible_operation() const {
  if (http_status == 400 && status == "FAILED_PRECONDITION") return true;
  if ((http_status == 400 || http_status == 409) && Contains(message, "incompatible operation")) return true;
  return http_status == 409 && status == "ABORTED";
}

bool ApiError::quota_exceeded() const {
  if (http_status != 403) return false;
  return Contains(reason, "quota") || Contains(message, "quota") || status == "RESOURCE_EXHAUSTED";
}

bool ApiError::retryable() const {
  if (!transport.ok()) return true;
  return rate_limited() || server_error() || incompatible_operation();
}

Status ApiError::ToStatus() const {
  if (!transport.ok()) return transport.WithContext(call);
  std::string text = call + ": " + std::to_string(http_status);
  if (!status.empty()) text += " " + status;
  if (!reason.empty() && reason != status) text += " (" + reason + ")";
  text += ": " + message;
  if (parse_error) return Status::Internal(text);
  switch (http_status) {
    case 404: return Status::NotFound(text);
    case 409: return incompatible_operation() ? Status::FailedPrecondition(text) : Status::AlreadyExists(text);
    case 400: return incompatible_operation() ? Status::FailedPrecondition(text) : Status::InvalidArgument(text);
    case 412: return Status::FailedPrecondition(text);
    case 401: return Status::PermissionDenied(text);
    case 403: return quota_exceeded() ? Status::ResourceExhausted(text) : Status::PermissionDenied(text);
    case 429: return Status::Unavailable(text);
    default: break;
  }
  if (http_status >= 500) return Status::Unavailable(text);
  return Status::Internal(text);
}

ApiError ApiErrorFromResponse(const std::string& call, const http::HttpResponse& response) {
  ApiError e;
  e.call = call;
  e.http_status = response.status;
  if (auto ra = response.Header("retry-after")) e.retry_after = ParseRetryAfter(*ra, Env::Default().WallNow());
  auto j = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    const auto& err = j["error"];
    if (err.contains("message") && err["message"].is_string()) e.message = err["message"];
    if (err.contains("status") && err["status"].is_string()) e.status = err["status"];
    // Compute (and old-style GKE): errors[{domain, reason, message}].
    if (err.contains("errors") && err["errors"].is_array()) {
      for (const auto& item : err["errors"]) {
        if (item.is_object() && item.contains("reason") && item["reason"].is_string()) {
          e.reason = item["reason"];
          break;
        }
      }
    }
    // google.rpc.ErrorInfo in details.
    if (e.reason.empty() && err.contains("details") && err["details"].is_array()) {
      for (const auto& d : err["details"]) {
        if (d.is_object() && d.contains("reason") && d["reason"].is_string()) {
          e.reason = d["reason"];
          break;
        }
      }
    }
  } else if (j.is_object() && j.contains("error") && j["error"].is_string()) {
    // OAuth token endpoints: {"error": "invalid_grant", "error_description": "..."}.
    e.reason = j["error"];
    if (j.contains("error_description") && j["error_description"].is_string()) e.message = j["error_description"];
  }
  if (e.message.empty()) {
    e.message = response.body.substr(0, 200);
    if (e.message.empty()) e.message = "(empty body)";
  }
  if (e.status.empty()) e.status = StatusNameForHttp(response.status);
  return e;
}

ApiError ApiErrorFromTransport(const std::string& call, Status transport) {
  ApiError e;
  e.call = call;
  e.message = transport.message();
  e.transport = std::move(transport);
  return e;
}

std::optional<std::chrono::seconds> ParseRetryAfter(const std::string& value,
                                                    std::chrono::system_clock::time_point now) {
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), [](unsigned char c) { return std::isdigit(c); })) {
    if (value.size() > 9) return std::nullopt;
    return std::chrono::seconds(std::stol(value));
  }
  // HTTP-date, IMF-fixdate form: "Sun, 06 Nov 1994 08:49:37 GMT".
  std::tm tm{};
  const char* end = strptime(value.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr) return std::nullopt;
  auto when = std::chrono::system_clock::from_time_t(timegm(&tm));
  auto delta = std::chrono::duration_cast<std::chrono::seconds>(when - now);
  return delta.count() > 0 ? delta : std::chrono::seconds(0);
}

ApiError ParseFailure(const std::string& call, const Status& s) {
  ApiError e;
  e.call = call;
  e.http_status = 200;
  e.parse_error = true;
  e.message = s.message();
  return e;
}

}  // namespace tpu::cloud
