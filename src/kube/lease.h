// coordination.k8s.io/v1 Lease objects as both users of Leases write and read
// them: leader election (leader_election.h) and the shards of a sharded
// `watch` (shard/shard_keeper.h). The rules are client-go's: a write renews
// now, keeps acquireTime and leaseTransitions unless the holder changes, and
// carries the read resourceVersion so a concurrent writer gets 409 Conflict.
#pragma once

#include <chrono>
#include <string>

#include "base/clock.h"
#include "kube/client.h"

namespace tpu::kube {

// The Lease ns/name held by `holder` ("" gives it back), renewed at `now`.
// `current`: the Lease as read (null: it does not exist yet). `transition`:
// the holder changes, so acquireTime is now and leaseTransitions counts one more.
json LeaseObject(const std::string& ns, const std::string& name, const std::string& holder,
                 std::chrono::seconds duration, WallTime now, const json* current, bool transition);

std::string LeaseHolder(const json& lease);
// holder|renewTime: what must change for a Lease to count as renewed.
std::string LeaseRecord(const json& lease);
std::chrono::seconds LeaseDuration(const json& lease);  // leaseDurationSeconds, default 15

}  // namespace tpu::kube
