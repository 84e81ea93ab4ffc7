// GitWebhook: POST /hooks/git. A call signed with the shared secret
// (X-Hub-Signature-256, GitHub's form) and not seen before (X-GitHub-Delivery)
// asks the loop to fetch now; anything else gets 401 and changes nothing.
// The body is not parsed: whatever the push was, the fetch finds out.
//
// The secret comes from a file or the environment, never the command line,
// and never appears in a reply or a log. Thread-safe (HTTP worker threads;
// SetSecret from the loop on SIGHUP).
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "source/delivery_cache.h"

namespace tpu::daemon {

struct WebhookReply {
  int http_status = 401;
  std::string body;    // one line of text
  std::string result;  // metric label: accepted | unauthorized | replayed | disabled
};

class GitWebhook {
 public:
  // `on_accepted` runs on the calling HTTP thread: it must only signal the loop.
  explicit GitWebhook(std::function<void()> on_accepted) : on_accepted_(std::move(on_accepted)) {}

  // "" disables the hook (every call gets 404).
  void SetSecret(std::string secret);
  WebhookReply Handle(std::string_view body, std::string_view signature_header,
                      std::string_view delivery_header);
  // Calls by result, for /metrics.
  std::map<std::string, uint64_t> Counts() const;

 private:
  std::function<void()> on_accepted_;
  mutable std::mutex mu_;
  std::string secret_;                    // guarded by mu_
  std::map<std::string, uint64_t> counts_;  // guarded by mu_
  source::DeliveryCache deliveries_;
};

}  // namespace tpu::daemon
