// Names and labels of demand-driven node pools (DESIGN.md §8).
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
#include "plan/ownership.h"

namespace tpu::demand {

// Pod and JobSet vocabulary.
inline constexpr const char* kJobSetNameLabel = "jobset.sigs.k8s.io/jobset-name";
inline constexpr const char* kJobKeyLabel = "jobset.sigs.k8s.io/job-key";
inline constexpr const char* kCompletionIndexAnnotation = "batch.kubernetes.io/job-completion-index";
inline constexpr const char* kDisableAnnotation = "tpu-provisioner.io/disable-autoprovisioning";
inline constexpr const char* kTpuResource = "google.com/tpu";
inline constexpr const char* kAcceleratorSelector = "cloud.google.com/gke-tpu-accelerator";
inline constexpr const char* kTopologySelector = "cloud.google.com/gke-tpu-topology";
inline constexpr const char* kSpotSelector = "cloud.google.com/gke-spot";
inline constexpr const char* kReservationSelector = "cloud.google.com/reservation-name";

// GCE resource labels on demand-driven pools.
// The planner reads the first three too (plan/ownership.h), to list these pools.
inline constexpr const char* kOwnerLabel = plan::kWorkloadOwnerLabel;  // = kOwnerWorkload
inline constexpr const char* kOwnerWorkload = plan::kWorkloadOwner;
inline constexpr const char* kPoolJobSetLabel = plan::kWorkloadJobSetLabel;
inline constexpr const char* kPoolNamespaceLabel = plan::kWorkloadNamespaceLabel;
inline constexpr const char* kPoolJobKeyLabel = "tpu-provisioner-job-key";
// Kubernetes node labels on their nodes (so `kubectl get nodes -l` finds them).
inline constexpr const char* kNodeJobSetLabel = "tpu-provisioner.io/jobset-name";
inline constexpr const char* kNodeNamespaceLabel = "tpu-provisioner.io/jobset-namespace";

inline constexpr size_t kMaxPoolName = 40;

// "<jobset prefix>-<job key prefix>", at most 40 characters, a valid GKE name
// (lower case letters, digits and '-', starting with a letter).
std::string PoolName(const std::string& jobset, const std::string& job_key);

// Who a demand-driven pool belongs to, read back from its resource labels.
struct PoolOwner {
  std::string ns;
  std::string jobset;
  std::string job_key;
  std::string Key() const { return ns + "/" + jobset; }  // the JobSet's cache key
};

// The description of a tpu7x pool's workload policy. Deliberately not the
// planner's "managed-by=tpu-provisioner" marker (ownership.h): git never
// prunes it; the demand module deletes it after its pool.
std::string WorkloadPolicyDescription(const std::string& pool);
// True when `description` is WorkloadPolicyDescription of some pool.
bool IsWorkloadPolicyDescription(const std::string& description);

// nullopt when `pool` is not a demand-driven pool.
std::optional<PoolOwner> WorkloadOwner(const cloud::NodePool& pool);

}  // namespace tpu::demand
