// CurlTransport: pooled easy handles over one shared connection cache.
#include "http/curl_transport.h"

#include <curl/curl.h>

#include <mutex>

#include <spdlog/spdlog.h>

#include "http/curl_easy.h"

namespace tpu::http {
namespace {

// The shared connection cache keeps libcurl's default of 5 otherwise: with
// dozens of workers nearly every call opened (and TLS-handshook) a new one.
constexpr long kMaxConnects = 128;

}  // namespace

// One CURLSH shared by every handle of a transport: connections, DNS and TLS
// sessions. libcurl requires lock callbacks when handles run on several threads.
struct CurlTransport::Shared {
  CURLSH* share = nullptr;
  std::mutex locks[CURL_LOCK_DATA_LAST];

  static void Lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
    static_cast<Shared*>(user)->locks[data].lock();
  }
  static void Unlock(CURL*, curl_lock_data data, void* user) {
    static_cast<Shared*>(user)->locks[data].unlock();
  }

  Shared() {
    share = curl_share_init();
    curl_share_setopt(share, CURLSHOPT_LOCKFUNC, &Shared::Lock);
    curl_share_setopt(share, CURLSHOPT_UNLOCKFUNC, &Shared::Unlock);
    curl_share_setopt(share, CURLSHOPT_USERDATA, this);
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
  }
  ~Shared() { curl_share_cleanup(share); }
};

CurlTransport::CurlTransport(CurlTransportOptions options)
    : options_(std::move(options)) {
  internal::GlobalInitOnce();
  shared_ = std::make_unique<Shared>();
  if (options_.insecure) {
    spdlog::warn("TLS verification is OFF and plain http is allowed to any host (--insecure-skip-tls-verify); "
                 "use only against a test endpoint");
  }
}

CurlTransport::~CurlTransport() {
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* CurlTransport::AcquireHandle() {
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!idle_.empty()) {
      void* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  CURL* h = curl_easy_init();
  curl_easy_setopt(h, CURLOPT_SHARE, shared_->share);
  curl_easy_setopt(h, CURLOPT_MAXCONNECTS, kMaxConnects);
  return h;
}

void CurlTransport::ReleaseHandle(void* handle) {
  auto* h = static_cast<CURL*>(handle);
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (idle_.size() < options_.max_idle_handles) {
      curl_easy_reset(h);  // keeps the connection cache, drops per-request options
      curl_easy_setopt(h, CURLOPT_SHARE, shared_->share);
      curl_easy_setopt(h, CURLOPT_MAXCONNECTS, kMaxConnects);
      idle_.push_back(h);
      return;
    }
  }
  curl_easy_cleanup(h);
}

Result<HttpResponse> CurlTransport::Send(const HttpRequest& request) {
  if (Status s = internal::CheckUrl(request, options_.insecure); !s.ok()) return s;
  if (request.cancel && request.cancel->cancelled()) {
    HttpResponse response;
    response.cancelled = true;
    return response;
  }
  CURL* h = static_cast<CURL*>(AcquireHandle());
  internal::Transfer t(&request);
  t.id = next_request_id_.fetch_add(1);
  internal::SetUp(h, &t, options_);
  CURLcode rc = curl_easy_perform(h);
  int64_t connects = 0;
  auto result = internal::Finish(h, rc, &t, &connects);
  connections_opened_.fetch_add(connects);
  ReleaseHandle(h);
  return result;
}

}  // namespace tpu::http
