// The Kubernetes API emulator: an HTTP server on loopback that serves the
// Store with the API's conventions (paths, discovery, list pagination, watch
// streams with bookmarks and 410 Gone, merge patch, server-side apply, Status
// error bodies). Written from the conventions, not from our client, so tests
// against it catch client mistakes.
//
// Usage in a test:
//   kubesim::KubeApiServer api({});       // core + coordination + Kueue v1beta2
//   ASSERT_TRUE(api.Start().ok());
//   ... point a client at api.url() ...
// Start() runs the server on its own threads until Stop() or destruction.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "sim/kube/resource_type.h"
#include "sim/kube/store.h"

namespace httplib {
class Server;
class Request;
class DataSink;
class Response;
}  // namespace httplib

namespace tpu::kubesim {

class KubeApiServer {
 public:
  struct Options {
    size_t history_limit = 1000;
    // Kueue versions to serve; empty serves no Kueue at all.
    std::vector<std::string> kueue_versions = {"v1beta2"};
    // When set ("v0.11"), serve what that Kueue release serves instead
    // (KueueReleaseTypes), and kueue_versions is ignored.
    std::string kueue_release;
    bool jobset = true;
    bool provisioning_requests = true;  // autoscaling.x-k8s.io/v1
    // How often an idle watch that asked for bookmarks gets one.
    std::chrono::milliseconds bookmark_interval{1000};
    // When set, a request whose Authorization header it rejects gets 401.
    std::function<bool(const std::string& authorization)> authorize;
    // Fault injection: when set and it returns a code (500, 503…) for a
    // request's method, path and body, the server answers that code with a
    // Status body, as an API server in trouble does, and changes nothing.
    std::function<int(const std::string& method, const std::string& path, const std::string& body)> fail;
  };

  explicit KubeApiServer(Options options);
  ~KubeApiServer();
  KubeApiServer(const KubeApiServer&) = delete;
  KubeApiServer& operator=(const KubeApiServer&) = delete;

  // Serves one more resource type (before Start).
  void Serve(ResourceType type);

  // Listens on 127.0.0.1:`port` (0: a free port).
  Status Start(int port = 0);
  void Stop();

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  Store& store() { return store_; }
  // Every open watch that asked for bookmarks sends one now.
  void SendBookmarks() { store_.WakeWatchers(); }

  // Watch streams of `resource` (plural, any group) open now, so a test can
  // wait until a client is watching before it acts.
  int OpenWatches(const std::string& resource) const;
  // List requests (GET of a collection, not a watch) of `resource` so far.
  int ListCalls(const std::string& resource) const;

  // The type serving group/version/resource, or nullptr.
  const ResourceType* Find(const std::string& group, const std::string& version,
                           const std::string& resource) const;

 private:
  // What a request's path names.
  struct Target {
    const ResourceType* type = nullptr;
    std::string ns, name, subresource;
  };
  void Route(const httplib::Request& req, httplib::Response& res);
  // False (and the reply sent) when the caller may not make this request.
  bool Authorize(const httplib::Request& req, httplib::Response& res);
  bool Resolve(const httplib::Request& req, httplib::Response& res, Target* target);
  void Discovery(const httplib::Request& req, httplib::Response& res);
  void List(const httplib::Request& req, httplib::Response& res, const Target& target);
  void Watch(const httplib::Request& req, httplib::Response& res, const Target& target);
  // A watch's first chunk without a start version: every matching object as
  // ADDED; `after` becomes the list's resourceVersion. False when the client left.
  bool WriteCurrentState(const ResourceType& type, const std::string& ns, const std::string& labels,
                         const std::string& fields, uint64_t* after, httplib::DataSink& sink);
  void Write(const httplib::Request& req, httplib::Response& res, const Target& target, const nlohmann::json& body);

  Options options_;
  std::vector<ResourceType> types_;
  Store store_;
  mutable std::mutex watches_mu_;
  std::map<std::string, int> open_watches_;  // by plural resource
  std::map<std::string, int> list_calls_;    // by plural resource
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace tpu::kubesim
