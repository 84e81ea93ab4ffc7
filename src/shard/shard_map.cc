// ShardOf and the Lease names: see shard_map.h.
#include "shard/shard_map.h"

#include <algorithm>

namespace tpu::shard {

int ShardOf(const std::string& target_key, int shards) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64
  for (unsigned char c : target_key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return static_cast<int>(h % static_cast<uint64_t>(std::max(shards, 1)));
}

std::string ShardLeaseName(const std::string& base, int shard) { return base + "-shard-" + std::to_string(shard); }

std::string MemberLeaseName(const std::string& base, const std::string& identity) {
  return base + "-member-" + identity;
}

int FairShare(int shards, int live_replicas) {
  live_replicas = std::max(live_replicas, 1);
  return (shards + live_replicas - 1) / live_replicas;
}

}  // namespace tpu::shard
