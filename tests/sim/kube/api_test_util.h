// A raw HTTP view of the emulator for its own tests: requests as any client
// would send them, so the emulator is checked against the API conventions and
// not against our client.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>

namespace tpu::kubesim::testing {

struct Answer {
  int code = 0;
  nlohmann::json body;
};

class Raw {
 public:
  explicit Raw(int port) : client_("127.0.0.1", port) {}
  // Every later request carries "Authorization: Bearer <token>".
  void SetBearer(const std::string& token) { client_.set_bearer_token_auth(token); }
  Answer Get(const std::string& path) { return Wrap(client_.Get(path.c_str())); }
  Answer Post(const std::string& path, const nlohmann::json& body) {
    return Wrap(client_.Post(path.c_str(), body.dump(), "application/json"));
  }
  Answer Put(const std::string& path, const nlohmann::json& body) {
    return Wrap(client_.Put(path.c_str(), body.dump(), "application/json"));
  }
  Answer Patch(const std::string& path, const nlohmann::json& body, const std::string& type) {
    return Wrap(client_.Patch(path.c_str(), body.dump(), type.c_str()));
  }
  Answer Delete(const std::string& path) { return Wrap(client_.Delete(path.c_str())); }
  // Reads watch events until `until` returns true for one (or the stream ends).
  std::vector<nlohmann::json> Watch(const std::string& path,
                                    const std::function<bool(const nlohmann::json&)>& until) {
    std::vector<nlohmann::json> events;
    std::string buffer;
    client_.Get(path.c_str(), [&](const char* data, size_t n) {
      buffer.append(data, n);
      size_t nl;
      while ((nl = buffer.find('\n')) != std::string::npos) {
        events.push_back(nlohmann::json::parse(buffer.substr(0, nl)));
        buffer.erase(0, nl + 1);
        if (until(events.back())) return false;
      }
      return true;
    });
    return events;
  }

 private:
  static Answer Wrap(const httplib::Result& r) {
    if (!r) return {};
    return {r->status, nlohmann::json::parse(r->body, nullptr, false)};
  }
  httplib::Client client_;
};

}  // namespace tpu::kubesim::testing
