// Mapping of HTTP codes and meta/v1 Status bodies to Status values.
#include "kube/status_errors.h"

namespace tpu::kube {

Status ErrorFromStatusObject(const nlohmann::json& status, const std::string& context) {
  long code = status.value("code", 500L);
  std::string reason = status.value("reason", "");
  std::string message = status.value("message", "");
  std::string text = context + ": " + std::to_string(code) + (reason.empty() ? "" : " " + reason) +
                     ": " + message;
  switch (code) {
    case 404: return Status::NotFound(text);
    case 409: return reason == "AlreadyExists" ? Status::AlreadyExists(text)
                                               : Status::FailedPrecondition(text);
    case 410: return Status::FailedPrecondition(text);
    case 401:
    case 403: return Status::PermissionDenied(text);
    case 400:
    case 415:
    case 422: return Status::InvalidArgument(text);
    case 504: return Status::DeadlineExceeded(text);
    default: break;
  }
  if (code == 429 || code >= 500) return Status::Unavailable(text);
  return Status::Internal(text);
}

Status ErrorFromResponse(long http_code, const std::string& body, const std::string& context) {
  auto parsed = nlohmann::json::parse(body, nullptr, false);
  if (parsed.is_object() && parsed.value("kind", "") == "Status") {
    if (!parsed.contains("code")) parsed["code"] = http_code;
    return ErrorFromStatusObject(parsed, context);
  }
  std::string text = body.size() > 200 ? body.substr(0, 200) + "..." : body;
  return ErrorFromStatusObject({{"code", http_code}, {"message", text}}, context);
}

namespace {
bool Has(const Status& s, const char* marker) {
  return s.message().find(marker) != std::string::npos;
}
}  // namespace

bool IsNotFound(const Status& s) { return s.code() == Status::Code::kNotFound; }
bool IsAlreadyExists(const Status& s) { return s.code() == Status::Code::kAlreadyExists; }
bool IsConflict(const Status& s) {
  return s.code() == Status::Code::kFailedPrecondition && Has(s, ": 409 ");
}
bool IsGone(const Status& s) {
  return s.code() == Status::Code::kFailedPrecondition && Has(s, ": 410 ");
}
bool IsUnauthorized(const Status& s) {
  return s.code() == Status::Code::kPermissionDenied && Has(s, ": 401");
}

}  // namespace tpu::kube
