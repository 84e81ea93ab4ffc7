// TargetBackoff: see target_backoff.h.
#include "daemon/target_backoff.h"

#include <algorithm>

namespace tpu::daemon {

std::chrono::milliseconds TargetBackoff::Failed(const std::string& target, TimePoint now,
                                                bool waiting_for_capacity) {
  Entry& e = entries_[target];
  ++e.failures;
  auto base = waiting_for_capacity ? policy_.capacity_initial : policy_.initial;
  auto cap = waiting_for_capacity ? policy_.capacity_max : policy_.max;
  auto delay = base;
  // Doubling stops at the cap; the shift is bounded so it cannot overflow.
  for (int i = 1; i < std::min(e.failures, 32) && delay < cap; ++i) delay *= 2;
  delay = std::min(delay, cap);
  e.retry_at = now + delay;
  return delay;
}

bool TargetBackoff::Ready(const std::string& target, TimePoint now) const {
  auto it = entries_.find(target);
  return it == entries_.end() || now >= it->second.retry_at;
}

bool TargetBackoff::RetryDue(const std::string& target, TimePoint now) const {
  auto it = entries_.find(target);
  return it != entries_.end() && now >= it->second.retry_at;
}

int TargetBackoff::failures(const std::string& target) const {
  auto it = entries_.find(target);
  return it == entries_.end() ? 0 : it->second.failures;
}

std::optional<TimePoint> TargetBackoff::RetryAt(const std::string& target) const {
  auto it = entries_.find(target);
  if (it == entries_.end()) return std::nullopt;
  return it->second.retry_at;
}

std::optional<TimePoint> TargetBackoff::NextRetry() const {
  std::optional<TimePoint> best;
  for (const auto& [k, e] : entries_)
    if (!best || e.retry_at < *best) best = e.retry_at;
  return best;
}

}  // namespace tpu::daemon
