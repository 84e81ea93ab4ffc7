// HttpResponse helpers.
#include "http/transport.h"

#include <strings.h>

namespace tpu::http {

std::optional<std::string> HttpResponse::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k.size() == name.size() && strncasecmp(k.data(), name.data(), k.size()) == 0) return v;
  }
  return std::nullopt;
}

}  // namespace tpu::http
