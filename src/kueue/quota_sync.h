// Writes quota that follows capacity into the cluster: one ResourceFlavor per
// accelerator+topology and the TPU nominalQuota in the configured ClusterQueue
// or Cohort, with server-side apply under the field manager tpu-provisioner.
//
// Fields people own survive: we never send namespaceSelector, preemption,
// cohort, stopPolicy and the like, so SSA leaves them alone. Kueue declares
// spec.resourceGroups atomic (one owner for the whole list), so for that list
// we read the object, change only our flavors' entries for our resource, keep
// everything else as it is (other groups, other resources, borrowingLimit,
// lendingLimit), and apply with the read resourceVersion as a precondition: a
// concurrent edit makes us re-read instead of overwriting it.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kube/client.h"
#include "kueue/config.h"
#include "kueue/versions.h"
#include "kueue/quota.h"
#include "manifest/types.h"

namespace tpu::kueue {

// Annotation on the queue listing the flavors we manage, so a flavor whose
// pools are gone is dropped and flavors people added are kept.
inline constexpr const char* kManagedFlavorsAnnotation = "tpu-provisioner.io/managed-flavors";

struct QuotaReport {
  std::string api_version;  // of the queue object: "kueue.x-k8s.io/v1beta2"
  std::vector<FlavorQuota> flavors;
  bool wrote_queue = false;  // false when the queue already said exactly this
  int writes = 0;            // objects written by this sync
  int skipped_writes = 0;    // objects that already said exactly this: not written
};

class QuotaSync {
 public:
  // `client` must outlive this object.
  QuotaSync(kube::KubeClient& client, KueueConfig config);

  // Reads Nodes, computes flavors and quota for `target` (pools named in
  // `excluded` count for nothing) and writes them.
  Result<QuotaReport> Sync(const manifest::Target& target, const std::set<std::string>& excluded = {});

  // The Kueue versions in use, per resource (discovered on first use, and
  // again after a failed discovery).
  Result<KueueVersions> Versions();
  // `base` at the Kueue version in use for its resource.
  Result<kube::ResourceRef> Kueue(const kube::ResourceRef& base);
  const KueueConfig& config() const { return config_; }

 private:
  // Applies the flavor unless the server already holds exactly our apply;
  // true when it wrote.
  Result<bool> ApplyFlavor(const kube::ResourceRef& ref, const FlavorQuota& fq);
  Result<bool> WriteQueue(const kube::ResourceRef& ref, const std::vector<FlavorQuota>& flavors);

  kube::KubeClient& client_;
  KueueConfig config_;
  std::optional<KueueVersions> versions_;
};

// The queue's resourceGroups with our flavors' quota of `resource` set to
// `flavors`, flavors in `previously_ours` but not in `flavors` dropped, and
// everything else kept. Exposed for tests.
nlohmann::json MergeResourceGroups(const nlohmann::json& current, const std::vector<FlavorQuota>& flavors,
                                   const std::string& resource, const std::set<std::string>& previously_ours);

}  // namespace tpu::kueue
