// KubeClient over HTTP(S) through the same transport as the cloud client
// (http/curl_transport.h: pooled handles, one connection cache, TLS always
// verified unless the kubeconfig says insecure-skip-tls-verify). Sends the
// bearer token the RestConfig's TokenSource gives, and retries a request once
// with a fresh token after a 401 (exec plugins' tokens expire, service account
// files rotate). Thread-safe, as the transport is.
#pragma once

#include <memory>

#include "http/transport.h"
#include "kube/client.h"
#include "kube/rest_config.h"

namespace tpu::kube {

class RestClient : public KubeClient {
 public:
  explicit RestClient(RestConfig config);
  ~RestClient() override;

  Result<json> Get(const ResourceRef& ref, const std::string& ns, const std::string& name) override;
  Result<ObjectList> List(const ResourceRef& ref, const std::string& ns,
                          const ListOptions& options) override;
  Result<json> Create(const ResourceRef& ref, const std::string& ns, const json& obj) override;
  Result<json> Update(const ResourceRef& ref, const std::string& ns, const json& obj) override;
  Result<json> MergePatch(const ResourceRef& ref, const std::string& ns, const std::string& name,
                          const json& patch, const std::string& subresource = "") override;
  Result<json> Apply(const ResourceRef& ref, const std::string& ns, const json& obj,
                     const ApplyOptions& options = {}) override;
  Status Delete(const ResourceRef& ref, const std::string& ns, const std::string& name) override;
  Status Watch(const ResourceRef& ref, const std::string& ns, const WatchOptions& options,
               const std::function<bool(const WatchEvent&)>& on_event) override;
  Result<std::vector<std::string>> ServedVersions(const std::string& group) override;
  Result<std::vector<std::string>> ServedResources(const std::string& group, const std::string& version) override;

  const RestConfig& config() const { return config_; }

 private:
  struct Request {
    std::string method;
    std::string path;  // with query
    std::string body;
    std::string content_type;
    // Streaming: called with each chunk of a 200 answer; false stops.
    std::function<bool(const char*, size_t)> on_chunk;
    http::CancelToken* cancel = nullptr;  // ends the transfer at once when cancelled
  };
  struct Answer {
    int code = 0;
    std::string body;
    bool cancelled = false;  // ended by req.cancel; code and body mean nothing
  };
  Result<Answer> Send(const Request& req);
  Result<Answer> SendOnce(const Request& req);
  Result<json> Do(const Request& req);

  RestConfig config_;
  std::unique_ptr<http::HttpTransport> transport_;
};

// Percent-encodes a query parameter value.
std::string QueryEscape(const std::string& value);

}  // namespace tpu::kube
