// DeliveryCache: refuses a webhook delivery id seen recently (replay
// protection for POST /hooks/git, keyed by GitHub's X-GitHub-Delivery GUID).
//
// Bounded: it remembers the last `capacity` ids, oldest forgotten first. A
// replay older than that gets through, which costs one extra fetch, the most
// any webhook can cause. Check the signature first and Admit() only signed
// calls, so unsigned junk cannot push real ids out. Thread-safe.
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>

#include "base/status.h"

namespace tpu::source {

inline constexpr std::string_view kGitHubDeliveryHeader = "X-GitHub-Delivery";

class DeliveryCache {
 public:
  // Remembers up to `capacity` ids (≥ 1).
  explicit DeliveryCache(size_t capacity = 1024);

  // OK and remembered when `id` is new. AlreadyExists when it was seen;
  // InvalidArgument when empty or not a plausible id (over 128 bytes, or
  // bytes outside printable ASCII: it ends up in logs).
  Status Admit(std::string_view id);

  size_t size() const;

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::deque<std::string> order_;           // oldest first
  std::unordered_set<std::string> seen_;    // the same ids, for lookup
};

}  // namespace tpu::source
