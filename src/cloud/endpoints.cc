// Endpoint resolution: flag, then gcloud override variable, then default.
#include "cloud/endpoints.h"

namespace tpu::cloud {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Checks the scheme and host and adds the trailing slash.
Result<std::string> NormaliseRoot(const std::string& url, const char* what) {
  auto scheme = url.find("://");
  std::string s = scheme == std::string::npos ? "" : url.substr(0, scheme);
  if ((s != "http" && s != "https") || url.size() <= scheme + 3 || url[scheme + 3] == '/') {
    return Status::InvalidArgument(std::string(what) + " endpoint \"" + url +
                                   "\": expected http(s)://host[:port][/path]");
  }
  if (url.find_first_of("?#") != std::string::npos) {
    return Status::InvalidArgument(std::string(what) + " endpoint \"" + url + "\": no query or fragment allowed");
  }
  return EndsWith(url, "/") ? url : url + "/";
}

std::string Pick(const std::string& flag, const Env& env, const char* var, const char* fallback) {
  if (!flag.empty()) return flag;
  if (auto v = env.Var(var); v && !v->empty()) return *v;
  return fallback;
}

}  // namespace

Result<Endpoints> ResolveEndpoints(const EndpointOptions& options, const Env& env) {
  Endpoints e;
  auto container = NormaliseRoot(
      Pick(options.container, env, "CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER", kDefaultContainerEndpoint), "container");
  if (!container.ok()) return container.status();
  // gcloud's container override is the service root; tolerate one that names
  // the version too, so "…/v1/" does not become "…/v1/v1/".
  e.container_root = *container;
  if (EndsWith(e.container_root, "/v1/")) e.container_root.resize(e.container_root.size() - 3);

  auto compute = NormaliseRoot(
      Pick(options.compute, env, "CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE", kDefaultComputeEndpoint), "compute");
  if (!compute.ok()) return compute.status();
  // gcloud's compute override usually carries "compute/v1/" (or another
  // version); a bare root gets it appended.
  e.compute_v1 = *compute;
  if (EndsWith(e.compute_v1, "/compute/")) {
    e.compute_v1 += "v1/";
  } else if (!EndsWith(e.compute_v1, "/compute/v1/") && !EndsWith(e.compute_v1, "/compute/beta/") &&
             !EndsWith(e.compute_v1, "/compute/alpha/")) {
    e.compute_v1 += "compute/v1/";
  }
  return e;
}

}  // namespace tpu::cloud
