// Ownership markers: how tpu-provisioner recognises what it created (docs/architecture.md, "Plan rules").
//
// Node pools carry GCE resource labels: kManagedLabel=true and kTargetHashLabel
// = TargetHash("project/cluster"), plus the two guard labels below, copied from
// the manifest's annotations so they still hold once the manifest is gone.
// Compute objects have no labels we can rely on, so their `description` holds
// "managed-by=tpu-provisioner target=<project>/<cluster> owner=<Kind>/<name>"
// (+ " prevent-destroy=true" when the manifest asked for it at creation: a
// description cannot be changed later, so that guard is best-effort there).
// Only owned resources are ever updated or deleted.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cloud/types.h"

namespace tpu::plan {

// Set on pools whose manifest says `tpu-provisioner.io/prevent-destroy: "true"`.
inline constexpr const char* kPreventDestroyLabel = "tpu-provisioner-prevent-destroy";  // "true"
// Set on pools whose manifest says `tpu-provisioner.io/deletion-policy: abandon`.
inline constexpr const char* kDeletionPolicyLabel = "tpu-provisioner-deletion-policy";  // "abandon"

// Demand-driven pools (docs/architecture.md, "Beside Kueue") carry kWorkloadOwnerLabel=kWorkloadOwner
// and no kManagedLabel: they belong to a workload, so the planner leaves them
// out of its diff and guards and only lists them (TargetPlan::workload_pools).
inline constexpr const char* kWorkloadOwnerLabel = "tpu-provisioner-owner";
inline constexpr const char* kWorkloadOwner = "workload";
inline constexpr const char* kWorkloadJobSetLabel = "tpu-provisioner-jobset";
inline constexpr const char* kWorkloadNamespaceLabel = "tpu-provisioner-namespace";

// A label-safe hash of "project/cluster" (16 hex digits).
std::string TargetHash(std::string_view target_key);

enum class Ownership {
  kOwned,      // our markers, this target's hash
  kUnmanaged,  // no marker: a pool someone else created
  kForeign,    // our marker, another target's hash (e.g. a copied pool): never touched
};

Ownership PoolOwnership(const cloud::NodePool& pool, std::string_view target_key);
// The same, given TargetHash(target_key): for one target's many pools.
Ownership PoolOwnershipByHash(const cloud::NodePool& pool, std::string_view target_hash);

// True when the live pool carries `label`=`value` in its resource labels.
bool HasResourceLabel(const cloud::NodePool& pool, const char* label, std::string_view value);

struct ComputeMarker {
  std::string target;  // "project/cluster"
  std::string owner;   // "TPUNodeGroup/name" or "TPUNodePool/name"
  bool prevent_destroy = false;
};

std::string ComputeDescription(const ComputeMarker& marker);
// nullopt when the description carries no kComputeMarker.
std::optional<ComputeMarker> ParseComputeDescription(std::string_view description);

}  // namespace tpu::plan
