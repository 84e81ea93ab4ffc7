// Builders for Google API error bodies (see cloud_errors.h).
#include "sim/cloud_errors.h"

namespace tpu::sim {

SimResponse ErrorResponse(const ApiError& e) {
  SimResponse r;
  r.status = e.http;
  r.body = {{"error",
             {{"code", e.http},
              {"message", e.message},
              {"status", e.status},
              {"errors", json::array({{{"message", e.message},
                                       {"domain", "global"},
                                       {"reason", e.reason}}})}}}};
  return r;
}

ApiError BadRequest(const std::string& m) { return {400, "INVALID_ARGUMENT", "badRequest", m}; }
ApiError FailedPrecondition(const std::string& m) {
  return {400, "FAILED_PRECONDITION", "failedPrecondition", m};
}
ApiError Unauthenticated() {
  return {401, "UNAUTHENTICATED", "required",
          "Request is missing required authentication credential. Expected OAuth 2 access "
          "token, login cookie or other valid authentication credential. See "
          "https://developers.google.com/identity/sign-in/web/devconsole-project."};
}
ApiError PermissionDenied(const std::string& m, const std::string& reason) {
  return {403, "PERMISSION_DENIED", reason, m};
}
ApiError NotFound(const std::string& m) { return {404, "NOT_FOUND", "notFound", m}; }
ApiError AlreadyExists(const std::string& m) { return {409, "ALREADY_EXISTS", "alreadyExists", m}; }
ApiError TooManyRequests(const std::string& m) {
  return {429, "RESOURCE_EXHAUSTED", "rateLimitExceeded", m};
}
ApiError Internal(const std::string& m) { return {500, "INTERNAL", "backendError", m}; }
ApiError Unavailable(const std::string& m) { return {503, "UNAVAILABLE", "backendError", m}; }

ApiError ComputeNotFound(const std::string& resource_path) {
  return NotFound("The resource '" + resource_path + "' was not found");
}
ApiError ComputeAlreadyExists(const std::string& resource_path) {
  return AlreadyExists("The resource '" + resource_path + "' already exists");
}

}  // namespace tpu::sim
