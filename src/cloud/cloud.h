// The one object cli/daemon build to talk to the cloud: owns the transport,
// the credentials, the call counter and both API clients, wired from options
// and the environment. Everything it hands out is thread-safe and lives as long
// as the CloudConnection.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "cloud/api_caller.h"
#include "cloud/compute_client.h"
#include "cloud/credentials.h"
#include "cloud/endpoints.h"
#include "cloud/gke_client.h"
#include "cloud/operation_poll.h"
#include "cloud/operation_watch.h"
#include "cloud/refresh.h"
#include "http/curl_transport.h"

namespace tpu::cloud {

struct CloudOptions {
  EndpointOptions endpoints;
  http::CurlTransportOptions transport;
  // A fixed bearer token ("" = no Authorization header, e.g. the emulator);
  // unset: Application Default Credentials (credentials.h).
  std::optional<std::string> access_token;
};

class CloudConnection {
 public:
  // Resolves endpoints and credentials; a credential error surfaces here, not
  // on the first call, except an unreachable metadata server (found lazily).
  // `env` (variables, files, clock) must outlive the connection.
  static Result<std::unique_ptr<CloudConnection>> Open(const CloudOptions& options,
                                                       const Env& env = Env::Default());
  // Injected parts, for tests (a fault-injecting transport, a static token).
  CloudConnection(std::unique_ptr<http::HttpTransport> transport, std::unique_ptr<TokenProvider> tokens,
                  Endpoints endpoints);
  // Stops the transport first: an event loop's timers and answers call into
  // the watch and the clients, which must outlive it.
  ~CloudConnection();
  CloudConnection(const CloudConnection&) = delete;
  CloudConnection& operator=(const CloudConnection&) = delete;

  GkeClient& gke() { return gke_; }
  ComputeClient& compute() { return compute_; }
  OperationPoller& poller() { return poller_; }
  // The apply's polls, batched per project (operation_watch.h).
  OperationWatch& watch() { return watch_; }
  CallCounter& calls() { return calls_; }
  http::HttpTransport& transport() { return *transport_; }
  const Endpoints& endpoints() const { return endpoints_; }

  Result<LiveState> Refresh(const std::vector<std::string>& projects,
                            const RefreshOptions& options = {}) {
    return cloud::Refresh(gke_, compute_, projects, options);
  }

 private:
  std::unique_ptr<http::HttpTransport> transport_;
  std::unique_ptr<TokenProvider> tokens_;
  Endpoints endpoints_;
  CallCounter calls_;
  ApiCaller caller_;
  GkeClient gke_;
  ComputeClient compute_;
  OperationPoller poller_;
  OperationWatch watch_;
};

}  // namespace tpu::cloud
