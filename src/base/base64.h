// Standard base64 (RFC 4648 §4, with padding): Kubernetes Secret data,
// kubeconfig certificate data. jwt.h has the URL-safe alphabet JWTs use.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tpu {

std::string Base64Encode(std::string_view data);
// Ignores whitespace and padding; nullopt on any other character outside the alphabet.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace tpu
