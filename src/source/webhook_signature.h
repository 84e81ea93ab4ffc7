// Checks what forges put on webhook calls to prove they know the secret:
// GitHub's X-Hub-Signature-256 = "sha256=" + hex(HMAC-SHA256(secret, body));
// Gitea's X-Gitea-Signature and Forgejo's X-Forgejo-Signature, the same HMAC
// as bare hex; GitLab's X-Gitlab-Token, the secret itself.
//
// POST /hooks/git only triggers a fetch, but an unsigned or badly signed call
// must change nothing (issue 6): the daemon answers 401 for any non-OK Status.
// The secret never appears in a message.
#pragma once

#include <string_view>

#include "base/status.h"

namespace tpu::source {

// The name of the header carrying the signature.
inline constexpr std::string_view kGitHubSignatureHeader = "X-Hub-Signature-256";

// OK when `header` (the X-Hub-Signature-256 value; "" when absent) is a valid
// signature of `body` under `secret`. The comparison takes the same time
// wherever the first differing byte is. PermissionDenied when missing,
// malformed or wrong; FailedPrecondition when `secret` is empty (an empty key
// would let anyone sign).
Status VerifyGitHubSignature(std::string_view secret, std::string_view body, std::string_view header);

// The same for a bare-hex signature (Gitea, Forgejo); `header_name` names it in messages.
Status VerifyHexSignature(std::string_view secret, std::string_view body, std::string_view hex,
                          std::string_view header_name);

// OK when `token` equals `secret` (GitLab's X-Gitlab-Token), compared in time
// that does not depend on where they differ.
Status VerifyToken(std::string_view secret, std::string_view token);

}  // namespace tpu::source
