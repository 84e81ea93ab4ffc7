// Where the GKE and Compute APIs live: the public defaults, or an override by
// flag (--gke-endpoint / --compute-endpoint) or by gcloud's variables
// CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER / _COMPUTE, flag first.
//
// Prefixes follow gcloud: a container override is the service root
// ("http://127.0.0.1:8080/") and the client appends "v1/projects/…"; a compute
// override may be the service root or already include "compute/v1/"
// ("https://www.googleapis.com/compute/v1/"); both are accepted.
#pragma once

#include <string>

#include "base/env.h"
#include "base/status.h"

namespace tpu::cloud {

inline constexpr const char* kDefaultContainerEndpoint = "https://container.googleapis.com/";
inline constexpr const char* kDefaultComputeEndpoint = "https://compute.googleapis.com/";

struct EndpointOptions {
  std::string container;  // --gke-endpoint; empty: env, then default
  std::string compute;    // --compute-endpoint
};

struct Endpoints {
  // Ends with "/"; requests are container_root + "v1/projects/…".
  std::string container_root;
  // Ends with "compute/v1/"; requests are compute_v1 + "projects/…".
  std::string compute_v1;
};

// InvalidArgument for a URL that is not http(s)://host[:port][/path].
Result<Endpoints> ResolveEndpoints(const EndpointOptions& options, const Env& env = Env::Default());

}  // namespace tpu::cloud
