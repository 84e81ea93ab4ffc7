// Status bodies as the API server writes them (apimachinery's StatusError).
#include "sim/kube/reply.h"

namespace tpu::kubesim {

Reply StatusReply(int code, const std::string& reason, const std::string& message,
                  nlohmann::json details) {
  nlohmann::json body = {{"kind", "Status"},      {"apiVersion", "v1"},
                         {"metadata", nlohmann::json::object()},
                         {"status", "Failure"},   {"message", message},
                         {"reason", reason},      {"code", code}};
  if (!details.is_null()) body["details"] = std::move(details);
  return {code, std::move(body)};
}

Reply NotFoundReply(const std::string& resource, const std::string& name) {
  return StatusReply(404, "NotFound", resource + " \"" + name + "\" not found",
                     {{"name", name}, {"kind", resource}});
}

}  // namespace tpu::kubesim
