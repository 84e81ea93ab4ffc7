// The instances a managed instance group owns (docs/emulator.md, "Compute: a
// MIG's instances"): made when the group is inserted or resized up, named
// <baseInstanceName>-<4 random characters>, given the template's machine type
// and metadata plus `created-by`; their status follows the operation that
// makes them (PROVISIONING while it is PENDING, STAGING while it runs, RUNNING
// once DONE); resized down, deleted with their group or one by one, they go
// away when that operation ends. A member of a group whose template names a
// specific reservation holds one of its VMs while it exists (or fails its
// attempt when none is left). Their HTTP routes are in
// compute_instance_routes.cc.
#pragma once

#include <string>

#include "sim/cloud_context.h"

namespace tpu::sim {

// Makes `count` instances for the group at `mig_key` (its wire form `mig`),
// CREATING until the operation at `op_key` ends.
void CreateGroupInstances(SimContext& ctx, const std::string& mig_key, const json& mig, int count,
                          const std::string& op_key);

// Brings the group's instances that are not going away to `target`: makes
// the missing ones, or marks the newest DELETING, all settled by `op_key`.
void ResizeGroupInstances(SimContext& ctx, const std::string& mig_key, const json& mig, int target,
                          const std::string& op_key);

// Marks every instance of the group DELETING, to go when `op_key` ends.
void RemoveGroupInstances(SimContext& ctx, const std::string& mig_key, const std::string& op_key);

// The operation at `op_key` ended (`error` null when it succeeded): instances
// it created are RUNNING, or stay CREATING with `error`'s errors as their last
// attempt's; those it removes are gone (or stay, if it failed).
void SettleInstances(CloudState& state, const std::string& op_key, const json& error);

// Sets the group's currentActions {creating, deleting, none} from its
// instances, and status.isStable once none is changing.
void CountGroupActions(const CloudState& state, const std::string& mig_key, json& mig);

// Drops whatever instances are left of a deleted group.
void DropGroupInstances(CloudState& state, const std::string& mig_key);

// The Instance as GET returns it now: its status derived from its operation.
json InstanceWire(const CloudState& state, const InstanceRecord& rec);

// The group's ManagedInstance entries, in name order (listManagedInstances).
json ManagedInstances(const CloudState& state, const std::string& mig_key);

// The compute_ops key of an operation ("projects/P/zones/Z/operations/O").
std::string ComputeOpKey(const OpRecord& op);

// A new metadata fingerprint: 8 random bytes, base64 (Metadata.fingerprint is bytes).
std::string NewFingerprint(SimContext& ctx);

}  // namespace tpu::sim
