// The Kubernetes client interface the rest of the project programs against.
// RestClient implements it over HTTP; tests and the daemon may wrap it
// (LeaderOnlyClient) or fake it. Objects are plain JSON.
//
// Errors are Status values carrying the API's own Status message (see
// api_error.h for telling a 409 Conflict or 410 Gone apart).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "http/cancel.h"
#include "kube/resource.h"

namespace tpu::kube {

using json = nlohmann::json;

// The field manager under which this product writes (server-side apply).
inline constexpr const char* kFieldManager = "tpu-provisioner";

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int64_t page_size = 500;  // `limit` per request; pages are followed
};

struct ObjectList {
  std::vector<json> items;
  std::string resource_version;  // watch from here to see every later change
};

struct WatchOptions {
  std::string resource_version;  // "" : the current state first, as ADDED events
  bool allow_bookmarks = true;
  int timeout_seconds = 300;  // the server ends the stream after this
  std::string label_selector;
  std::string field_selector;
  // When set and cancelled, the stream ends at once with OK (see cancel.h).
  http::CancelToken* cancel = nullptr;
};

struct WatchEvent {
  std::string type;  // ADDED | MODIFIED | DELETED | BOOKMARK
  json object;
};

struct ApplyOptions {
  std::string field_manager = kFieldManager;
  bool force = true;  // take over fields we declare from other managers
  std::string subresource;
};

class KubeClient {
 public:
  virtual ~KubeClient() = default;

  virtual Result<json> Get(const ResourceRef& ref, const std::string& ns,
                           const std::string& name) = 0;
  // Every page, following `continue` tokens.
  virtual Result<ObjectList> List(const ResourceRef& ref, const std::string& ns,
                                  const ListOptions& options) = 0;
  virtual Result<json> Create(const ResourceRef& ref, const std::string& ns, const json& obj) = 0;
  // PUT; obj.metadata.resourceVersion, when set, must be current (else 409).
  virtual Result<json> Update(const ResourceRef& ref, const std::string& ns, const json& obj) = 0;
  virtual Result<json> MergePatch(const ResourceRef& ref, const std::string& ns,
                                  const std::string& name, const json& patch,
                                  const std::string& subresource = "") = 0;
  // Server-side apply of obj (named by obj.metadata.name).
  virtual Result<json> Apply(const ResourceRef& ref, const std::string& ns, const json& obj,
                             const ApplyOptions& options = {}) = 0;
  virtual Status Delete(const ResourceRef& ref, const std::string& ns,
                        const std::string& name) = 0;
  // Streams events to `on_event` until it returns false (OK), the server ends
  // the stream (OK), options.cancel is cancelled (OK), or an error: an ERROR event such as 410 Gone comes back
  // as its Status.
  virtual Status Watch(const ResourceRef& ref, const std::string& ns, const WatchOptions& options,
                       const std::function<bool(const WatchEvent&)>& on_event) = 0;
  // The versions of `group` the server serves, preferred first; empty when
  // the group is not served at all.
  virtual Result<std::vector<std::string>> ServedVersions(const std::string& group) = 0;
  // The resources (plural names, no subresources) `group`/`version` serves;
  // empty when that version is not served.
  virtual Result<std::vector<std::string>> ServedResources(const std::string& group,
                                                           const std::string& version) = 0;
};

}  // namespace tpu::kube
