// HMAC-SHA256 webhook signatures. See webhook_signature.h.
#include "source/webhook_signature.h"

#include <array>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace tpu::source {
namespace {

constexpr std::string_view kPrefix = "sha256=";
constexpr size_t kDigestSize = 32;  // SHA-256

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Status VerifyGitHubSignature(std::string_view secret, std::string_view body, std::string_view header) {
  if (secret.empty()) return Status::FailedPrecondition("webhook secret is not configured");
  if (header.empty()) {
    return Status::PermissionDenied("missing " + std::string(kGitHubSignatureHeader) + " header");
  }
  if (header.substr(0, kPrefix.size()) != kPrefix || header.size() == kPrefix.size()) {
    return Status::PermissionDenied("malformed " + std::string(kGitHubSignatureHeader) +
                                    " header: expected sha256=<64 hex digits>");
  }
  return VerifyHexSignature(secret, body, header.substr(kPrefix.size()), kGitHubSignatureHeader);
}

Status VerifyHexSignature(std::string_view secret, std::string_view body, std::string_view hex,
                          std::string_view header_name) {
  if (secret.empty()) return Status::FailedPrecondition("webhook secret is not configured");
  if (hex.empty()) return Status::PermissionDenied("missing " + std::string(header_name) + " header");
  std::array<unsigned char, kDigestSize> claimed;
  bool well_formed = hex.size() == 2 * kDigestSize;
  for (size_t i = 0; well_formed && i < kDigestSize; ++i) {
    int hi = HexValue(hex[2 * i]), lo = HexValue(hex[2 * i + 1]);
    well_formed = hi >= 0 && lo >= 0;
    claimed[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  if (!well_formed) {
    return Status::PermissionDenied("malformed " + std::string(header_name) + " header: expected " +
                                    (header_name == kGitHubSignatureHeader ? "sha256=" : "") + "<64 hex digits>");
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> actual;
  unsigned int len = 0;
  if (!HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
            reinterpret_cast<const unsigned char*>(body.data()), body.size(), actual.data(), &len) ||
      len != kDigestSize) {
    return Status::Internal("HMAC-SHA256 failed");
  }
  if (CRYPTO_memcmp(actual.data(), claimed.data(), kDigestSize) != 0) {
    return Status::PermissionDenied("webhook signature does not match the body");
  }
  return Status::OK();
}

Status VerifyToken(std::string_view secret, std::string_view token) {
  if (secret.empty()) return Status::FailedPrecondition("webhook secret is not configured");
  // Both hashed first, so the comparison's time says nothing of either length.
  unsigned char a[kDigestSize], b[kDigestSize];
  unsigned int la = 0, lb = 0;
  EVP_Digest(secret.data(), secret.size(), a, &la, EVP_sha256(), nullptr);
  EVP_Digest(token.data(), token.size(), b, &lb, EVP_sha256(), nullptr);
  if (token.empty() || CRYPTO_memcmp(a, b, kDigestSize) != 0) return Status::PermissionDenied("webhook token refused");
  return Status::OK();
}

}  // namespace tpu::source
