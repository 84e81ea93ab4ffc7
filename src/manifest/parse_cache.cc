// ParseCache bookkeeping: lookups mark entries as used by the current load,
// EndLoad drops the rest.
#include "manifest/parse_cache.h"

namespace tpu::manifest {

void ParseCache::BeginLoad() {
  ++load_;
  last_parses_ = 0;
}

std::shared_ptr<const ParsedFile> ParseCache::Find(const std::string& id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return nullptr;
  it->second.used = load_;
  ++hits_;
  return it->second.file;
}

void ParseCache::Insert(const std::string& id, std::shared_ptr<const ParsedFile> file) {
  entries_[id] = Entry{std::move(file), load_};
}

void ParseCache::Touch(const std::string& id) {
  auto it = entries_.find(id);
  if (it != entries_.end()) it->second.used = load_;
}

const ParseCache::Listing* ParseCache::FindListing(const std::string& dir) const {
  auto it = listings_.find(dir);
  return it == listings_.end() ? nullptr : &it->second;
}

void ParseCache::EndLoad() {
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.used != load_) it = entries_.erase(it);
    else ++it;
  }
}

}  // namespace tpu::manifest
