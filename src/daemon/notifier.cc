// Notifier: see notifier.h.
#include "daemon/notifier.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <random>

#include <spdlog/spdlog.h>

#include "base/change_windows.h"

namespace tpu::daemon {

std::string SignBody(const std::string& secret, const std::string& body) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(body.data()), body.size(), digest, &len);
  static const char* kHex = "0123456789abcdef";
  std::string out = "sha256=";
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

std::string Notifier::Body(const Event& e, const std::string& id, const std::string& time) {
  nlohmann::json j = {{"id", id},       {"type", e.type},         {"time", time},
                      {"target", e.target}, {"revision", e.revision}, {"text", e.text},
                      {"details", e.details}};
  return j.dump();
}

Notifier::Notifier(http::HttpTransport* transport, NotifierOptions options)
    : transport_(transport), o_(std::move(options)) {
  for (const auto& url : o_.urls) {
    auto q = std::make_unique<Queue>();
    q->url = url;
    size_t host = url.find("://");
    host = host == std::string::npos ? 0 : host + 3;
    q->label = "receiver " + std::to_string(queues_.size() + 1) + " (" +
               url.substr(host, url.find_first_of("/?#", host) - host) + ")";
    queues_.push_back(std::move(q));
  }
  for (auto& q : queues_) q->thread = std::thread([this, p = q.get()] { Run(p); });
}

Notifier::~Notifier() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& q : queues_) q->thread.join();
}

void Notifier::Notify(Event event) {
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          o_.clock->WallNow().time_since_epoch()).count();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    std::string body = Body(event, std::to_string(now) + "-" + std::to_string(++next_id_), FormatRfc3339(now));
    for (auto& q : queues_) {
      if (q->bodies.size() >= o_.queue_limit) {
        q->bodies.pop_front();
        ++stats_.dropped;
      }
      q->bodies.push_back(body);
    }
  }
  cv_.notify_all();
}

NotifierStats Notifier::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

bool Notifier::SendOnce(const Queue& q, const std::string& body, bool* retryable) {
  http::HttpRequest req;
  req.method = "POST";
  req.url = q.url;
  req.body = body;
  req.timeout = o_.timeout;
  req.headers = {{"Content-Type", "application/json"}, {"User-Agent", "tpu-provisioner"}};
  if (!o_.secret.empty()) req.headers.push_back({kNotifySignatureHeader, SignBody(o_.secret, body)});
  auto r = transport_->Send(req);
  if (!r.ok()) {
    *retryable = r.status().code() != Status::Code::kInvalidArgument;
    spdlog::debug("notify {}: no response (its error may name the secret URL, so it is not logged)", q.label);
    return false;
  }
  if (r->status >= 200 && r->status < 300) return true;
  *retryable = r->status == 408 || r->status == 429 || r->status >= 500;
  spdlog::debug("notify {}: HTTP {}", q.label, r->status);
  return false;
}

void Notifier::Run(Queue* q) {
  std::mt19937 rng(std::random_device{}());
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || !q->bodies.empty(); });
    if (stop_) return;
    std::string body = q->bodies.front();
    q->bodies.pop_front();
    bool sent = false;
    for (int attempt = 0; attempt < o_.attempts && !stop_; ++attempt) {
      if (attempt > 0) {
        // Exponential backoff with full jitter; a shutdown cuts it short.
        auto cap = std::min(o_.max_retry, o_.first_retry * (1 << std::min(attempt - 1, 16)));
        std::uniform_int_distribution<int64_t> d(cap.count() / 2, cap.count());
        ++stats_.retries;
        if (cv_.wait_for(lock, std::chrono::milliseconds(d(rng)), [&] { return stop_; })) return;
      }
      bool retryable = false;
      lock.unlock();
      sent = SendOnce(*q, body, &retryable);
      lock.lock();
      if (sent || !retryable) break;
    }
    if (sent) {
      ++stats_.sent;
    } else {
      ++stats_.failed;
      spdlog::warn("notify {}: gave up on an event after {} attempts", q->label, o_.attempts);
    }
  }
}

}  // namespace tpu::daemon
