// Turns a Kubernetes API answer that is not a success into a Status that keeps
// the server's Status message, and tells the outcomes callers branch on apart.
// (The cloud's errors are a type of their own, cloud::ApiError: Kubernetes
// failures are plain Status values, read with the Is…() helpers below.)
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tpu::kube {

// "<context>: <code> <reason>: <message>", e.g. "PATCH /apis/...: 409 Conflict:
// Apply failed with 1 conflict: ...". Codes: 404 NotFound, 409 AlreadyExists
// or FailedPrecondition (Conflict), 410 FailedPrecondition (Gone/Expired),
// 401/403 PermissionDenied, 400/422 InvalidArgument, 429/5xx Unavailable.
Status ErrorFromResponse(long http_code, const std::string& body, const std::string& context);
Status ErrorFromStatusObject(const nlohmann::json& status, const std::string& context);

bool IsNotFound(const Status& s);
bool IsAlreadyExists(const Status& s);
bool IsConflict(const Status& s);  // 409 other than AlreadyExists
bool IsGone(const Status& s);      // 410: the resource version is too old
bool IsUnauthorized(const Status& s);

}  // namespace tpu::kube
