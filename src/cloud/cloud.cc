// CloudConnection wiring.
#include "cloud/cloud.h"

#include <spdlog/spdlog.h>

#include "http/curl_multi.h"

namespace tpu::cloud {

CloudConnection::CloudConnection(std::unique_ptr<http::HttpTransport> transport, std::unique_ptr<TokenProvider> tokens,
                                 Endpoints endpoints)
    : transport_(std::move(transport)),
      tokens_(std::move(tokens)),
      endpoints_(std::move(endpoints)),
      caller_(transport_.get(), tokens_.get(), &calls_),
      gke_(&caller_, endpoints_.container_root),
      compute_(&caller_, endpoints_.compute_v1),
      poller_(&gke_, &compute_),
      watch_(&poller_, &gke_, &compute_, transport_.get()) {}

CloudConnection::~CloudConnection() { transport_.reset(); }

Result<std::unique_ptr<CloudConnection>> CloudConnection::Open(const CloudOptions& options, const Env& env) {
  auto endpoints = ResolveEndpoints(options.endpoints, env);
  if (!endpoints.ok()) return endpoints.status();
  // Every Google API call goes through one event loop (docs/architecture.md, "Threads").
  auto transport = std::make_unique<http::CurlMultiLoop>(options.transport);
  std::unique_ptr<TokenProvider> tokens;
  if (options.access_token) {
    tokens = std::make_unique<StaticTokenProvider>(*options.access_token);
  } else {
    auto found = FindDefaultCredentials(transport.get(), env);
    if (!found.ok()) return found.status();
    tokens = std::move(*found);
  }
  spdlog::debug("cloud: container {} compute {} credentials {}", endpoints->container_root, endpoints->compute_v1,
                tokens->Describe());
  return std::make_unique<CloudConnection>(std::move(transport), std::move(tokens), std::move(*endpoints));
}

}  // namespace tpu::cloud
