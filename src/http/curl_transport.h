// HttpTransport over libcurl.
//
// Thread-safe: Send() may be called from any number of threads at once. Each
// call borrows an idle easy handle from a pool (or makes one) and returns it,
// and all handles share one connection cache, DNS cache and TLS session cache,
// so a small fixed pool of threads reuses a few keep-alive connections instead
// of reconnecting per call. Used where a call is made on the caller's thread
// and may stream: the Kubernetes client (watches, with CancelToken) and
// webhooks. The Google API calls, many in flight at once, go through
// CurlMultiLoop (curl_multi.h), which shares this file's options and rules.
//
// TLS verification is always on. Plain http:// is refused except to loopback
// hosts and the GCE metadata server (which Google serves only over http), unless
// `insecure` is set, which also disables certificate checks and logs a warning.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "http/transport.h"

namespace tpu::http {

struct CurlTransportOptions {
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds total_timeout{60'000};
  // Disables TLS verification and the plain-http rule. Logs a warning once.
  bool insecure = false;
  // Server verification: a CA bundle as a file or as PEM text; both empty use
  // the system store.
  std::string ca_file;
  std::string ca_pem;
  // Client certificate authentication (a kubeconfig's user), as files or PEM text.
  std::string client_cert_file;
  std::string client_key_file;
  std::string client_cert_pem;
  std::string client_key_pem;
  // Empty sends "tpu-provisioner/VERSION".
  std::string user_agent;
  // Idle easy handles kept for reuse; more are made on demand.
  size_t max_idle_handles = 64;
};

// True for hosts plain http may reach: 127.0.0.0/8, ::1, localhost, and the
// metadata server (169.254.169.254, metadata.google.internal, metadata).
bool IsPlainHttpAllowedHost(const std::string& host);

// The host of an absolute URL ("http://h:1/x" → "h", "http://[::1]:2/" → "::1").
std::string UrlHost(const std::string& url);

class CurlTransport : public HttpTransport {
 public:
  explicit CurlTransport(CurlTransportOptions options = {});
  ~CurlTransport() override;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  Result<HttpResponse> Send(const HttpRequest& request) override;

  // New TCP connections opened so far (reuse keeps this low). For tests and metrics.
  int64_t connections_opened() const { return connections_opened_.load(); }

 private:
  struct Shared;  // the CURLSH and its locks
  void* AcquireHandle();
  void ReleaseHandle(void* handle);

  CurlTransportOptions options_;
  std::unique_ptr<Shared> shared_;
  std::mutex pool_mu_;
  std::vector<void*> idle_;  // CURL* handles, guarded by pool_mu_
  std::atomic<int64_t> next_request_id_{1};
  std::atomic<int64_t> connections_opened_{0};
};

}  // namespace tpu::http
