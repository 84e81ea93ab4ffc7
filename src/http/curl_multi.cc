// CurlMultiLoop: one thread, curl_multi_poll, and a queue of submitted requests.
#include "http/curl_multi.h"

#include <curl/curl.h>

#include <future>
#include <map>

#include <spdlog/spdlog.h>

#include "http/curl_easy.h"

namespace tpu::http {
namespace {

// Idle connections kept for reuse, over all hosts.
constexpr long kLoopMaxConnects = 256;
// How often the loop looks at cancel tokens while transfers run: a token
// wakes the loop by shutting its sockets down, but a transfer still resolving
// or connecting has none yet.
constexpr int kCancelCheckMs = 100;
// Idle easy handles kept (reset) for the next request.
constexpr size_t kMaxIdleHandles = 256;

}  // namespace

struct CurlMultiLoop::Job {
  HttpRequest request;
  Done done;
  std::unique_ptr<internal::Transfer> transfer;
  CURL* handle = nullptr;
};

struct CurlMultiLoop::Handles {
  CURLM* multi = nullptr;
  CURLSH* share = nullptr;  // TLS sessions and DNS; one thread, so no locks
  std::vector<CURL*> idle;
  std::map<CURL*, std::unique_ptr<Job>> running;

  ~Handles() {
    for (CURL* h : idle) curl_easy_cleanup(h);
    curl_multi_cleanup(multi);
    curl_share_cleanup(share);
  }
};

CurlMultiLoop::CurlMultiLoop(CurlTransportOptions options, long max_host_connections)
    : options_(std::move(options)), handles_(std::make_unique<Handles>()) {
  internal::GlobalInitOnce();
  handles_->multi = curl_multi_init();
  curl_multi_setopt(handles_->multi, CURLMOPT_MAX_HOST_CONNECTIONS, max_host_connections);
  curl_multi_setopt(handles_->multi, CURLMOPT_MAXCONNECTS, kLoopMaxConnects);
  curl_multi_setopt(handles_->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
  handles_->share = curl_share_init();
  curl_share_setopt(handles_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  curl_share_setopt(handles_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  if (options_.insecure) {
    spdlog::warn("TLS verification is OFF and plain http is allowed to any host (--insecure-skip-tls-verify); "
                 "use only against a test endpoint");
  }
  thread_ = std::thread([this] { Loop(); });
}

CurlMultiLoop::~CurlMultiLoop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  curl_multi_wakeup(handles_->multi);
  thread_.join();
}

int CurlMultiLoop::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_;
}

int CurlMultiLoop::peak_in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_in_flight_;
}

void CurlMultiLoop::Submit(HttpRequest request, Done done) {
  auto job = std::make_unique<Job>();
  job->request = std::move(request);
  job->done = std::move(done);
  {
    std::lock_guard<std::mutex> lock(mu_);
    incoming_.push_back(std::move(job));
    peak_in_flight_ = std::max(peak_in_flight_, ++in_flight_);
  }
  curl_multi_wakeup(handles_->multi);
}

void CurlMultiLoop::RunAfter(std::chrono::milliseconds delay, std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    timers_.push(Timer{std::chrono::steady_clock::now() + delay, timer_seq_++, std::move(fn)});
  }
  curl_multi_wakeup(handles_->multi);
}

std::chrono::milliseconds CurlMultiLoop::RunDueTimers(std::chrono::milliseconds idle) {
  for (;;) {
    std::function<void()> fn;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (timers_.empty()) return idle;
      const auto now = std::chrono::steady_clock::now();
      const Timer& next = timers_.top();
      if (next.due > now) {
        // Rounded up, so the loop does not wake a moment early and spin.
        auto wait = std::chrono::ceil<std::chrono::milliseconds>(next.due - now);
        return std::min(idle, wait);
      }
      fn = std::move(const_cast<Timer&>(next).fn);
      timers_.pop();
    }
    fn();  // may Submit or set timers: mu_ is not held
  }
}

Result<HttpResponse> CurlMultiLoop::Send(const HttpRequest& request) {
  if (std::this_thread::get_id() == thread_.get_id()) {
    return Status::Internal("CurlMultiLoop::Send called on its own loop thread: " + request.method + " " +
                            request.url);
  }
  std::promise<Result<HttpResponse>> answer;
  auto future = answer.get_future();
  Submit(request, [&answer](Result<HttpResponse> r) { answer.set_value(std::move(r)); });
  return future.get();
}

void CurlMultiLoop::Complete(std::unique_ptr<Job> job, Result<HttpResponse> result) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
  }
  job->done(std::move(result));
}

void CurlMultiLoop::Start(std::unique_ptr<Job> job) {
  if (Status s = internal::CheckUrl(job->request, options_.insecure); !s.ok()) {
    return Complete(std::move(job), std::move(s));
  }
  if (job->request.cancel && job->request.cancel->cancelled()) {
    HttpResponse cancelled;
    cancelled.cancelled = true;
    return Complete(std::move(job), std::move(cancelled));
  }
  Handles& hs = *handles_;
  CURL* h = nullptr;
  if (!hs.idle.empty()) {
    h = hs.idle.back();
    hs.idle.pop_back();
  } else {
    h = curl_easy_init();
  }
  curl_easy_setopt(h, CURLOPT_SHARE, hs.share);
  job->transfer = std::make_unique<internal::Transfer>(&job->request);
  job->transfer->id = next_request_id_.fetch_add(1);
  internal::SetUp(h, job->transfer.get(), options_);
  // Over TLS the server may speak HTTP/2: wait for a connection being set up
  // to multiplex on it rather than open one per request.
  if (job->request.url.rfind("https://", 0) == 0) curl_easy_setopt(h, CURLOPT_PIPEWAIT, 1L);
  job->handle = h;
  curl_multi_add_handle(hs.multi, h);
  hs.running.emplace(h, std::move(job));
}

void CurlMultiLoop::Loop() {
  Handles& hs = *handles_;
  auto release = [&hs](CURL* h) {
    curl_multi_remove_handle(hs.multi, h);
    if (hs.idle.size() < kMaxIdleHandles) {
      curl_easy_reset(h);  // drops per-request options; connections stay in the multi's cache
      hs.idle.push_back(h);
    } else {
      curl_easy_cleanup(h);
    }
  };
  for (;;) {
    std::vector<std::unique_ptr<Job>> incoming;
    bool stopping = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      incoming.swap(incoming_);
      stopping = stopping_;
    }
    if (stopping) {
      for (auto& job : incoming) Complete(std::move(job), Status::Unavailable("HTTP loop stopped"));
      while (!hs.running.empty()) {
        auto node = hs.running.extract(hs.running.begin());
        release(node.key());
        Complete(std::move(node.mapped()), Status::Unavailable("HTTP loop stopped"));
      }
      return;
    }
    for (auto& job : incoming) Start(std::move(job));

    int still_running = 0;
    curl_multi_perform(hs.multi, &still_running);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(hs.multi, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* h = msg->easy_handle;
      const CURLcode rc = msg->data.result;
      auto node = hs.running.extract(h);
      if (node.empty()) continue;
      int64_t connects = 0;
      auto result = internal::Finish(h, rc, node.mapped()->transfer.get(), &connects);
      connections_opened_.fetch_add(connects);
      release(h);
      Complete(std::move(node.mapped()), std::move(result));
    }
    // A cancelled transfer ends now, whatever libcurl would still do with it.
    for (auto it = hs.running.begin(); it != hs.running.end();) {
      CancelToken* cancel = it->second->request.cancel;
      if (!cancel || !cancel->cancelled()) {
        ++it;
        continue;
      }
      auto node = hs.running.extract(it++);
      release(node.key());
      HttpResponse cancelled;
      cancelled.cancelled = true;
      Complete(std::move(node.mapped()), std::move(cancelled));
    }
    const auto idle = std::chrono::milliseconds(hs.running.empty() ? 60'000 : kCancelCheckMs);
    const auto wait = RunDueTimers(idle);
    {
      // A timer may have submitted requests: start them before sleeping.
      std::lock_guard<std::mutex> lock(mu_);
      if (!incoming_.empty()) continue;
    }
    // Woken early by curl_multi_wakeup (a submit, a timer, the destructor) or by a socket.
    curl_multi_poll(hs.multi, nullptr, 0, static_cast<int>(wait.count()), nullptr);
  }
}

}  // namespace tpu::http
