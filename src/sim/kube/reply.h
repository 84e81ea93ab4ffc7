// What the emulator answers: an HTTP code and a JSON body, which for errors is
// a meta/v1 Status ({"kind":"Status","status":"Failure","reason":...}).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tpu::kubesim {

struct Reply {
  int code = 200;
  nlohmann::json body;
  bool ok() const { return code < 300; }
};

// A Failure Status with the reason Kubernetes uses for `code` unless given.
Reply StatusReply(int code, const std::string& reason, const std::string& message,
                  nlohmann::json details = nullptr);

Reply NotFoundReply(const std::string& resource, const std::string& name);

}  // namespace tpu::kubesim
