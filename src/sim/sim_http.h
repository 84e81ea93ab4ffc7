// The emulator's view of one HTTP exchange, independent of the HTTP server
// library, so the route handlers (GKE, Compute, control) stay plain functions
// over the state and httplib stays inside cloud_emulator.cc.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tpu::sim {

using json = nlohmann::json;

struct SimRequest {
  std::string method;                         // GET, POST, PUT, DELETE, PATCH
  std::string path;                           // without the query string
  std::vector<std::string> segments;          // path split on '/', empty ones dropped
  std::multimap<std::string, std::string> query;
  std::string body;                           // raw body
  std::string user_agent;                     // as sent; recorded (audit logs keep it too)
  // Body parsed as JSON; null if empty. Mutable because validation rewrites
  // numeric enum values to their names in place (ApiSchema::Validate).
  mutable json parsed;

  std::string Query(const std::string& key, const std::string& fallback = "") const {
    auto it = query.find(key);
    return it == query.end() ? fallback : it->second;
  }
  bool HasQuery(const std::string& key) const { return query.count(key) > 0; }
};

struct SimResponse {
  int status = 200;
  json body = json::object();  // serialized as the response; null means empty body
};

// 200 with `body`.
inline SimResponse OkResponse(json body) {
  SimResponse r;
  r.body = std::move(body);
  return r;
}

}  // namespace tpu::sim
