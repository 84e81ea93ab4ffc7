// Notifications: the daemon's events (an apply started, finished or failed, a
// target blocked, a stockout, drift detected, a history rewrite) POSTed as
// JSON to each --notify-url. The body carries a `text` line, so a Slack- or
// Mattermost-compatible incoming webhook shows it unchanged; the other fields
// are for programs. With a secret, each call is signed as GitHub signs its
// webhooks: header X-TPU-Provisioner-Signature-256 = "sha256=" +
// hex(HMAC-SHA256(secret, body)); `id` and `time` let a receiver drop replays.
//
// Notify() only queues: each URL has its own sender thread, queue (bounded:
// the oldest event is dropped when full) and retries with exponential backoff
// and jitter, so a receiver that is down or slow never slows the reconcile
// loop, nor the other receivers.
//
// Thread-safety: Notify() and stats() from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/env.h"
#include "http/transport.h"

namespace tpu::daemon {

struct Event {
  // apply.started | apply.finished | apply.failed | target.blocked | stockout |
  // drift.detected | history.rewrite
  std::string type;
  std::string target;    // "project/cluster"; "" for repository-wide events
  std::string revision;
  std::string text;      // one line for people
  nlohmann::json details = nlohmann::json::object();
};

// Where the reconciler sends events. Must not block.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void Notify(Event event) = 0;
};

inline constexpr const char* kNotifySignatureHeader = "X-TPU-Provisioner-Signature-256";

struct NotifierOptions {
  std::vector<std::string> urls;
  std::string secret;  // "" sends unsigned
  size_t queue_limit = 1000;  // per URL
  int attempts = 6;           // per event and URL
  std::chrono::milliseconds first_retry{500};
  std::chrono::milliseconds max_retry{30'000};
  // Per call; also the longest a shutdown waits for a receiver that hangs.
  std::chrono::milliseconds timeout{5'000};
  const Clock* clock = &Env::Default();  // stamps events (their id and time)
};

struct NotifierStats {
  uint64_t sent = 0, failed = 0, dropped = 0, retries = 0;
};

class Notifier : public EventSink {
 public:
  // `transport` must outlive the Notifier. Starts one thread per URL.
  Notifier(http::HttpTransport* transport, NotifierOptions options);
  // Stops the senders; events still queued are dropped (a shutdown must not
  // wait on a receiver that is down), a call in flight ends by its timeout.
  ~Notifier() override;
  void Notify(Event event) override;
  NotifierStats stats() const;
  // The JSON body of `event` (also what tests verify).
  static std::string Body(const Event& event, const std::string& id, const std::string& time);

 private:
  struct Queue {
    std::string url;    // never logged: a Slack webhook's path is its secret
    std::string label;  // "receiver 1 (hooks.slack.com)", for logs
    std::deque<std::string> bodies;
    std::thread thread;
  };
  void Run(Queue* q);
  bool SendOnce(const Queue& q, const std::string& body, bool* retryable);

  http::HttpTransport* transport_;
  const NotifierOptions o_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;                          // guarded by mu_
  NotifierStats stats_;                        // guarded by mu_
  uint64_t next_id_ = 0;                       // guarded by mu_
  std::vector<std::unique_ptr<Queue>> queues_;  // bodies guarded by mu_
};

// HMAC-SHA256 of `body` under `secret`, as "sha256=<hex>".
std::string SignBody(const std::string& secret, const std::string& body);

}  // namespace tpu::daemon
