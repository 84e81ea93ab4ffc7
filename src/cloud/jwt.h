// RS256 JSON Web Tokens for the OAuth 2.0 JWT bearer grant (RFC 7523), signed
// with a service account's PEM private key through OpenSSL.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tpu::cloud {

std::string Base64UrlEncode(std::string_view data);  // no padding
Result<std::string> Base64UrlDecode(std::string_view data);

// header.claims.signature, header {"alg":"RS256","typ":"JWT"[,"kid"]}.
// InvalidArgument if the key does not parse or is not RSA.
Result<std::string> SignJwtRs256(const nlohmann::json& claims, const std::string& private_key_pem,
                                 const std::string& key_id = "");

// Checks an RS256 JWT against a PEM public key and returns its claims.
// (Used by tests acting as a token endpoint.)
Result<nlohmann::json> VerifyJwtRs256(const std::string& jwt, const std::string& public_key_pem);

}  // namespace tpu::cloud
