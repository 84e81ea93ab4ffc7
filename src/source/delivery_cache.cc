// A bounded set of recently seen webhook delivery ids. See delivery_cache.h.
#include "source/delivery_cache.h"

#include <algorithm>

namespace tpu::source {
namespace {

constexpr size_t kMaxIdLength = 128;  // GUIDs are 36; anything much longer is not an id

}  // namespace

DeliveryCache::DeliveryCache(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

Status DeliveryCache::Admit(std::string_view id) {
  if (id.empty()) return Status::InvalidArgument("missing " + std::string(kGitHubDeliveryHeader) + " header");
  bool printable = std::all_of(id.begin(), id.end(), [](char c) { return c > ' ' && c < 0x7f; });
  if (id.size() > kMaxIdLength || !printable) {
    return Status::InvalidArgument("malformed " + std::string(kGitHubDeliveryHeader) + " header");
  }
  std::lock_guard lock(mu_);
  std::string key(id);
  if (seen_.count(key)) return Status::AlreadyExists("webhook delivery " + key + " was already received");
  if (order_.size() == capacity_) {
    seen_.erase(order_.front());
    order_.pop_front();
  }
  order_.push_back(key);
  seen_.insert(std::move(key));
  return Status::OK();
}

size_t DeliveryCache::size() const {
  std::lock_guard lock(mu_);
  return order_.size();
}

}  // namespace tpu::source
