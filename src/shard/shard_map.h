// Which shard a target belongs to, and the names of the Leases that hold
// shards and announce replicas (docs/scaling.md). The hash is FNV-1a over
// "project/cluster": stable across processes, builds and machines, so every
// replica computes the same map without talking to the others.
#pragma once

#include <cstdint>
#include <string>

namespace tpu::shard {

// The shard of `target_key` ("project/cluster") among `shards` (>= 1).
int ShardOf(const std::string& target_key, int shards);

// "<base>-shard-<i>": the Lease whose holder reconciles shard i.
std::string ShardLeaseName(const std::string& base, int shard);
// "<base>-member-<identity>": the Lease a live replica keeps renewed.
std::string MemberLeaseName(const std::string& base, const std::string& identity);

// The label every Lease of one shard set carries, so one list reads them all.
inline constexpr const char* kShardSetLabel = "tpu-provisioner.io/shard-set";
// The annotation every Lease of the set carries with the writer's shard count:
// replicas that disagree on it would map targets differently, so none acts.
inline constexpr const char* kShardCountAnnotation = "tpu-provisioner.io/shards";

// ceil(shards / live replicas): the most shards one replica takes.
int FairShare(int shards, int live_replicas);

}  // namespace tpu::shard
