// GitWebhook: POST /hooks/git. A call that proves it knows the shared secret
// and carries a delivery id not seen before asks the loop to fetch now;
// anything else gets 401 and changes nothing. The body is not parsed:
// whatever the push was, the fetch finds out.
//
// Forges, by the headers they send (each forge's webhook documentation):
//   GitHub          X-Hub-Signature-256 (sha256=HMAC) + X-GitHub-Delivery
//   Gitea           X-Gitea-Signature (hex HMAC)      + X-Gitea-Delivery
//   Forgejo         X-Forgejo-Signature (hex HMAC)    + X-Forgejo-Delivery
//   GitLab          X-Gitlab-Token (the secret)       + X-Gitlab-Event-UUID
//                                                       (or X-Gitlab-Webhook-UUID)
// A call authenticated but without its forge's delivery id is refused: a
// captured call could otherwise be replayed at will, since the signature
// covers no time.
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
  // metric label: accepted | unauthorized | no-delivery-id | replayed | disabled
  std::string result;
};

// A request header's value by name (case-insensitive), "" when absent.
using HeaderLookup = std::function<std::string(const std::string& name)>;

class GitWebhook {
 public:
  // `on_accepted` runs on the calling HTTP thread: it must only signal the loop.
  explicit GitWebhook(std::function<void()> on_accepted) : on_accepted_(std::move(on_accepted)) {}

  // "" disables the hook (every call gets 404).
  void SetSecret(std::string secret);
  WebhookReply Handle(std::string_view body, const HeaderLookup& header);
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
