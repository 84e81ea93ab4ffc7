// Error bodies as Google APIs return them:
//   {"error":{"code":404,"message":"…","status":"NOT_FOUND",
//             "errors":[{"message":"…","domain":"global","reason":"notFound"}]}}
// GKE and Compute word their messages differently; the helpers below take the
// final message text, the callers choose the wording of the API they emulate.
#pragma once

#include <string>

#include "sim/sim_http.h"

namespace tpu::sim {

struct ApiError {
  int http = 500;
  std::string status;   // canonical code name: NOT_FOUND, FAILED_PRECONDITION, …
  std::string reason;   // legacy reason: notFound, conflict, …
  std::string message;
};

SimResponse ErrorResponse(const ApiError& e);

ApiError BadRequest(const std::string& message);          // 400 INVALID_ARGUMENT
ApiError FailedPrecondition(const std::string& message);  // 400 FAILED_PRECONDITION
ApiError Unauthenticated();                               // 401
ApiError PermissionDenied(const std::string& message, const std::string& reason = "forbidden");
ApiError NotFound(const std::string& message);            // 404
ApiError AlreadyExists(const std::string& message);       // 409
ApiError TooManyRequests(const std::string& message);     // 429 RESOURCE_EXHAUSTED
ApiError Internal(const std::string& message);            // 500
ApiError Unavailable(const std::string& message);         // 503

// Compute's "The resource 'projects/p/zones/z/x/n' was not found".
ApiError ComputeNotFound(const std::string& resource_path);
ApiError ComputeAlreadyExists(const std::string& resource_path);

}  // namespace tpu::sim
