// RS256 signing and verification with OpenSSL's EVP interface.
#include "cloud/jwt.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <memory>

namespace tpu::cloud {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

struct BioFree { void operator()(BIO* b) const { BIO_free(b); } };
struct PkeyFree { void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); } };
struct MdCtxFree { void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); } };

}  // namespace

std::string Base64UrlEncode(std::string_view data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : data) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(acc >> bits) & 0x3f];
    }
  }
  if (bits > 0) out += kAlphabet[(acc << (6 - bits)) & 0x3f];
  return out;
}

Result<std::string> Base64UrlDecode(std::string_view data) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : data) {
    if (c == '=') break;
    const char* p = std::char_traits<char>::find(kAlphabet, 64, c);
    if (p == nullptr) return Status::InvalidArgument("invalid base64url character");
    acc = (acc << 6) | static_cast<uint32_t>(p - kAlphabet);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

Result<std::string> SignJwtRs256(const nlohmann::json& claims, const std::string& private_key_pem,
                                 const std::string& key_id) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(private_key_pem.data(), static_cast<int>(private_key_pem.size())));
  std::unique_ptr<EVP_PKEY, PkeyFree> key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return Status::InvalidArgument("private_key is not a PEM private key");
  if (EVP_PKEY_base_id(key.get()) != EVP_PKEY_RSA) return Status::InvalidArgument("private_key is not an RSA key");

  nlohmann::json header = {{"alg", "RS256"}, {"typ", "JWT"}};
  if (!key_id.empty()) header["kid"] = key_id;
  std::string input = Base64UrlEncode(header.dump()) + "." + Base64UrlEncode(claims.dump());

  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  size_t len = 0;
  if (EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
    return Status::Internal("RS256 signing failed");
  }
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
    return Status::Internal("RS256 signing failed");
  }
  sig.resize(len);
  return input + "." + Base64UrlEncode(sig);
}

Result<nlohmann::json> VerifyJwtRs256(const std::string& jwt, const std::string& public_key_pem) {
  auto dot1 = jwt.find('.');
  auto dot2 = dot1 == std::string::npos ? dot1 : jwt.find('.', dot1 + 1);
  if (dot2 == std::string::npos) return Status::InvalidArgument("JWT must have three parts");
  auto header = Base64UrlDecode(std::string_view(jwt).substr(0, dot1));
  auto claims = Base64UrlDecode(std::string_view(jwt).substr(dot1 + 1, dot2 - dot1 - 1));
  auto sig = Base64UrlDecode(std::string_view(jwt).substr(dot2 + 1));
  if (!header.ok() || !claims.ok() || !sig.ok()) return Status::InvalidArgument("JWT is not base64url");
  auto h = nlohmann::json::parse(*header, nullptr, false);
  if (!h.is_object() || h.value("alg", "") != "RS256") return Status::InvalidArgument("JWT alg is not RS256");

  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(public_key_pem.data(), static_cast<int>(public_key_pem.size())));
  std::unique_ptr<EVP_PKEY, PkeyFree> key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return Status::InvalidArgument("not a PEM public key");
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  std::string input = jwt.substr(0, dot2);
  if (EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig->data()), sig->size(),
                       reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
    return Status::PermissionDenied("JWT signature does not verify");
  }
  auto c = nlohmann::json::parse(*claims, nullptr, false);
  if (!c.is_object()) return Status::InvalidArgument("JWT claims are not a JSON object");
  return c;
}

}  // namespace tpu::cloud
