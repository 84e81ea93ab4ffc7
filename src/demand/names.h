// Names and labels of demand-driven node pools (docs/architecture.md, "Beside Kueue").
//
// A pool's name is a pure function of its JobSet's name and its Job's key, so
// a JobSet restart (same Jobs, same keys) finds its pools again and a daemon
// restart never creates a second one: the cloud's pool list and operations
// list are the only memory. The GCE resource labels say who owns the pool —
// the workload, not git: `tpu-provisioner-owner=workload` and no
// `tpu-provisioner-managed` marker, so the GitOps planner sees an unmanaged
// pool and never prunes it.
#pragma once

#include <optional>
#include <string>

#include "cloud/types.h"
#include "plan/node_labels.h"
#include "plan/ownership.h"

namespace tpu::demand {

// Pod and JobSet vocabulary.
inline constexpr const char* kJobSetNameLabel = "jobset.sigs.k8s.io/jobset-name";
inline constexpr const char* kJobKeyLabel = "jobset.sigs.k8s.io/job-key";
inline constexpr const char* kCompletionIndexAnnotation = "batch.kubernetes.io/job-completion-index";
inline constexpr const char* kJobSetUidLabel = "jobset.sigs.k8s.io/jobset-uid";
inline constexpr const char* kDisableAnnotation = "tpu-provisioner.io/disable-autoprovisioning";
inline constexpr const char* kTpuResource = "google.com/tpu";
// GKE's TPU node labels, the ones TPUNodeGroup nodes carry too.
inline constexpr const char* kAcceleratorSelector = plan::kTpuAcceleratorLabel;
inline constexpr const char* kTopologySelector = plan::kTpuTopologyLabel;
inline constexpr const char* kSpotSelector = "cloud.google.com/gke-spot";
inline constexpr const char* kReservationSelector = "cloud.google.com/reservation-name";
inline constexpr const char* kReservationProjectSelector = "cloud.google.com/reservation-project";
// Selectors under cloud.google.com/ that are still copied onto the pool's
// nodes: GKE does not set them, the GKE TPU Provisioner passes them through
// (its admission webhook adds the location hint to every Job).
inline constexpr const char* kIciResiliencySelector = "cloud.google.com/gke-tpu-ici-resiliency";
inline constexpr const char* kLocationHintSelector = "cloud.google.com/gke-location-hint";

// The GKE TPU Provisioner's keys (GoogleCloudPlatform/ai-on-gke, tpu-provisioner/),
// honoured so that its JobSets and pools work here unchanged.
inline constexpr const char* kCompatDisableKey = "tpu-provisioner.cloud.google.com/disable-autoprovisioning";
inline constexpr const char* kCompatCopyLabels = "tpu-provisioner.cloud.google.com/copy-labels";
inline constexpr const char* kCompatAdditionalNetworks = "tpu-provisioner.cloud.google.com/additional-node-networks";
inline constexpr const char* kCompatNodeServiceAccount = "tpu-provisioner.cloud.google.com/node-service-account";
// Node labels the original puts on the pools it creates.
inline constexpr const char* kCompatManagerLabel = "google.com/nodepool-manager";
inline constexpr const char* kCompatManagerValue = "tpu-provisioner";
inline constexpr const char* kCompatJobSetLabel = "google.com/tpu-provisioner-jobset-name";
inline constexpr const char* kCompatNamespaceLabel = "google.com/tpu-provisioner-jobset-namespace";
inline constexpr const char* kCompatNodepoolIdLabel = "provisioner-nodepool-id";  // its older pools
inline constexpr size_t kCompatJobSetPrefix = 34;  // its names: jobset[:34]-jobkey[:5]
inline constexpr size_t kCompatJobKeySuffix = 5;
// tpu7x: the workload policies its README asks to pre-create per region.
inline constexpr const char* kCompatPolicyPrefix = "tpu-provisioner-";

// GCE resource labels on demand-driven pools.
// The planner reads the first three too (plan/ownership.h), to list these pools.
inline constexpr const char* kOwnerLabel = plan::kWorkloadOwnerLabel;  // = kOwnerWorkload
inline constexpr const char* kOwnerWorkload = plan::kWorkloadOwner;
inline constexpr const char* kPoolJobSetLabel = plan::kWorkloadJobSetLabel;
inline constexpr const char* kPoolNamespaceLabel = plan::kWorkloadNamespaceLabel;
inline constexpr const char* kPoolJobKeyLabel = "tpu-provisioner-job-key";
// The JobSet's UID (a JobSet deleted and submitted again under its name has a
// new one) and a hash of what the pool was built from (shape, capacity,
// selectors): a pool that no longer fits its Job is replaced, not reused.
inline constexpr const char* kPoolJobSetUidLabel = "tpu-provisioner-jobset-uid";
inline constexpr const char* kPoolSpecLabel = "tpu-provisioner-spec";
// Kubernetes node labels on their nodes (so `kubectl get nodes -l` finds them).
inline constexpr const char* kNodeJobSetLabel = "tpu-provisioner.io/jobset-name";
inline constexpr const char* kNodeNamespaceLabel = "tpu-provisioner.io/jobset-namespace";

inline constexpr size_t kMaxPoolName = 40;

// "<jobset prefix>-<job key prefix>", at most 40 characters, a valid GKE name
// (lower case letters, digits and '-', starting with a letter).
std::string PoolName(const std::string& jobset, const std::string& job_key);
// The GKE TPU Provisioner's name for the same Job's pool: jobset[:34]-jobkey[:5].
std::string CompatPoolName(const std::string& jobset, const std::string& job_key);

// Who a demand-driven pool belongs to, read back from its resource labels.
struct PoolOwner {
  std::string ns;
  std::string jobset;
  std::string job_key;      // "" for a pool the GKE TPU Provisioner made
  std::string jobset_uid;   // "" when not recorded (older pools, the original's)
  std::string spec;         // kPoolSpecLabel; "" when not recorded
  bool adopted = false;     // made by the GKE TPU Provisioner, recognised by its node labels
  std::string Key() const { return ns + "/" + jobset; }  // the JobSet's cache key
};

// The description of a tpu7x pool's workload policy. Deliberately not the
// planner's "managed-by=tpu-provisioner" marker (ownership.h): git never
// prunes it; the demand module deletes it after its pool.
std::string WorkloadPolicyDescription(const std::string& pool);
// True when `description` is WorkloadPolicyDescription of some pool.
bool IsWorkloadPolicyDescription(const std::string& description);

// nullopt when `pool` is not a demand-driven pool: ours (resource labels), or
// one the GKE TPU Provisioner made (its node labels: the manager label and the
// JobSet's name, namespace "default" when absent, as the original reads them).
std::optional<PoolOwner> WorkloadOwner(const cloud::NodePool& pool);

}  // namespace tpu::demand
