// The HTTP seam between the API clients and the network. Clients build an
// HttpRequest and hand it to an HttpTransport; production uses CurlTransport
// (curl_transport.h), tests use it against loopback servers or wrap it to
// inject faults. A transport failure (no response at all) is a non-OK Result;
// any HTTP response, 4xx and 5xx included, is an OK Result the caller classifies.
//
// Thread safety: every HttpTransport must allow concurrent Send() calls.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace tpu::cloud {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  HttpHeaders headers;   // values never logged (they may hold a bearer token)
  std::string body;      // never logged
  // Whole-request deadline; zero means the transport's default.
  std::chrono::milliseconds timeout{0};
  // Connect deadline; zero means the transport's default. The metadata-server
  // probe uses a short one so machines off GCE fail fast.
  std::chrono::milliseconds connect_timeout{0};
};

struct HttpResponse {
  int status = 0;
  HttpHeaders headers;  // names lower-cased
  std::string body;

  // The first header with that name (case-insensitive), if any.
  std::optional<std::string> Header(std::string_view name) const;
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // Sends one request and waits for its response. Errors:
  //   Unavailable       connection refused/reset, DNS failure, TLS failure
  //   DeadlineExceeded  connect or total timeout
  //   InvalidArgument   a URL the transport refuses (plain http to a remote host)
  virtual Result<HttpResponse> Send(const HttpRequest& request) = 0;
};

}  // namespace tpu::cloud
