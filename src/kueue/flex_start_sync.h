// Keeps DWS flex-start wired into Kueue as git declares it: while the Kueue
// target has flex-start pools, our ProvisioningRequestConfig and
// AdmissionCheck exist and the ClusterQueue's admissionChecksStrategy runs the
// check on the flex-start flavors; once the last flex-start pool leaves git,
// our rule leaves the queue and the two objects are deleted (only ours: they
// carry our managed-by label).
//
// The queue field is spec.admissionChecksStrategy in both Kueue versions:
// v1beta2 has no spec.admissionChecks, and the strategy lets the check run
// only for the flavors whose nodes DWS provides. In v1beta2 its list is a map
// keyed by name, so we apply our rule alone and SSA keeps everyone else's; in
// v1beta1 it is atomic, so we read, merge (flex_start.h) and apply the whole
// list with the read resourceVersion, as the quota sync does resourceGroups.
// A v1beta1 queue that lists spec.admissionChecks cannot also have a strategy
// (Kueue refuses both): we leave it alone and say so in the report.
//
// In cohort mode there is no queue of ours to attach the check to: nothing
// is written, and the report says why.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kube/client.h"
#include "kueue/quota_sync.h"
#include "manifest/types.h"

namespace tpu::kueue {

struct FlexStartReport {
  std::vector<std::string> flavors;  // flavors with flex-start pools in git
  bool attached = false;             // our check is on the queue
  std::string unattached_reason;     // flex-start pools, yet no check: why
  int writes = 0;                    // objects written or deleted
};

class FlexStartSync {
 public:
  // `client` and `quota` must outlive this object.
  FlexStartSync(kube::KubeClient& client, QuotaSync& quota) : client_(client), quota_(quota) {}

  Result<FlexStartReport> Sync(const manifest::Target& target);

 private:
  Status Discover();
  // Applies `obj` unless the server already holds exactly it; true when written.
  Result<bool> ApplyObject(const kube::ResourceRef& ref, const json& obj);
  // Our rule on the queue for `flavors` (none: removed). Sets report fields.
  Status WriteRule(const std::vector<std::string>& flavors, FlexStartReport* report);
  // Deletes our config and check if present and ours.
  Status DeleteOurs(FlexStartReport* report);

  kube::KubeClient& client_;
  QuotaSync& quota_;
  std::optional<kube::ResourceRef> config_ref_;
  std::optional<kube::ResourceRef> check_ref_;
};

}  // namespace tpu::kueue
