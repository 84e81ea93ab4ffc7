// GitWebhook: see git_webhook.h.
#include "daemon/git_webhook.h"

#include "source/webhook_signature.h"

namespace tpu::daemon {
namespace {

// What a call proved and which delivery id it carries.
struct Verdict {
  bool authenticated = false;
  std::string delivery;  // "forge:id", "" when the forge's id header is absent
};

std::string FirstOf(const HeaderLookup& header, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    std::string v = header(n);
    if (!v.empty()) return v;
  }
  return "";
}

// The forge is told by its authentication header; a call carrying several is
// judged by the first present, in this order, so a bad GitHub signature is
// not rescued by another header.
Verdict Authenticate(const std::string& secret, std::string_view body, const HeaderLookup& header) {
  Verdict v;
  auto delivery = [&](const char* forge, std::initializer_list<const char*> names) {
    std::string id = FirstOf(header, names);
    return id.empty() ? std::string() : std::string(forge) + ":" + id;
  };
  if (std::string sig = header(std::string(source::kGitHubSignatureHeader)); !sig.empty()) {
    v.authenticated = source::VerifyGitHubSignature(secret, body, sig).ok();
    v.delivery = delivery("github", {"X-GitHub-Delivery"});
  } else if (std::string sig = header("X-Forgejo-Signature"); !sig.empty()) {
    v.authenticated = source::VerifyHexSignature(secret, body, sig, "X-Forgejo-Signature").ok();
    v.delivery = delivery("forgejo", {"X-Forgejo-Delivery", "X-Gitea-Delivery"});
  } else if (std::string sig = header("X-Gitea-Signature"); !sig.empty()) {
    v.authenticated = source::VerifyHexSignature(secret, body, sig, "X-Gitea-Signature").ok();
    v.delivery = delivery("gitea", {"X-Gitea-Delivery"});
  } else if (std::string token = header("X-Gitlab-Token"); !token.empty()) {
    v.authenticated = source::VerifyToken(secret, token).ok();
    v.delivery = delivery("gitlab", {"X-Gitlab-Event-UUID", "X-Gitlab-Webhook-UUID"});
  }
  return v;
}

}  // namespace

void GitWebhook::SetSecret(std::string secret) {
  std::lock_guard<std::mutex> lock(mu_);
  secret_ = std::move(secret);
}

WebhookReply GitWebhook::Handle(std::string_view body, const HeaderLookup& header) {
  WebhookReply reply;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Verdict v = secret_.empty() ? Verdict{} : Authenticate(secret_, body, header);
    if (secret_.empty()) {
      reply = {404, "webhook not configured (no secret)\n", "disabled"};
    } else if (!v.authenticated) {
      // One message for missing, malformed and wrong: no hints to a prober.
      reply = {401, "missing or invalid signature (X-Hub-Signature-256, X-Gitea-Signature, X-Forgejo-Signature "
                    "or X-Gitlab-Token)\n",
               "unauthorized"};
    } else if (v.delivery.empty()) {
      reply = {401, "no delivery id (X-GitHub-Delivery, X-Gitea-Delivery, X-Forgejo-Delivery or "
                    "X-Gitlab-Event-UUID): refused, since it could be replayed\n",
               "no-delivery-id"};
    } else if (!deliveries_.Admit(v.delivery).ok()) {
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
