// GitWebhook: see git_webhook.h.
#include "daemon/git_webhook.h"

#include "source/webhook_signature.h"

namespace tpu::daemon {

void GitWebhook::SetSecret(std::string secret) {
  std::lock_guard<std::mutex> lock(mu_);
  secret_ = std::move(secret);
}

WebhookReply GitWebhook::Handle(std::string_view body, std::string_view signature_header,
                                std::string_view delivery_header) {
  WebhookReply reply;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (secret_.empty()) {
      reply = {404, "webhook not configured (no secret)\n", "disabled"};
    } else if (!source::VerifyGitHubSignature(secret_, body, signature_header).ok()) {
      // One message for missing, malformed and wrong: no hints to a prober.
      reply = {401, "missing or invalid " + std::string(source::kGitHubSignatureHeader) + "\n",
               "unauthorized"};
    } else if (!delivery_header.empty() && !deliveries_.Admit(delivery_header).ok()) {
      reply = {401, "delivery already seen or malformed delivery id\n", "replayed"};
    } else {
      reply = {202, "fetch scheduled\n", "accepted"};
    }
    ++counts_[reply.result];
  }
  if (reply.http_status == 202) on_accepted_();
  return reply;
}

std::map<std::string, uint64_t> GitWebhook::Counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

}  // namespace tpu::daemon
