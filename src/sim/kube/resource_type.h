// The kinds of object the Kubernetes API emulator serves, described the way
// discovery describes them: group/version/resource, kind, scope, and the
// list types server-side apply needs (what a CRD's schema would declare).
#pragma once

#include <string>
#include <vector>

#include "sim/kube/field_set.h"

namespace tpu::kubesim {

struct ResourceType {
  std::string group;     // "" for the core group
  std::string version;   // "v1", "v1beta2"
  std::string resource;  // plural, lower case: "clusterqueues"
  std::string kind;      // "ClusterQueue"
  bool namespaced = false;
  bool status_subresource = false;  // writes to the object ignore .status, /status only it
  ListTypes list_types;

  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
  // Objects are stored once per group+resource, whatever version serves them.
  std::string StorageKey() const { return group + "/" + resource; }
};

// Namespaces, Nodes, Pods, Events, ConfigMaps (core/v1) and Leases
// (coordination.k8s.io/v1).
std::vector<ResourceType> BuiltinTypes();

// Kueue's ResourceFlavor, ClusterQueue, Cohort, LocalQueue, Workload,
// ProvisioningRequestConfig and AdmissionCheck at `version` ("v1beta1" or
// "v1beta2"), with their list types. Every release we emulate (v0.9 on)
// serves the last two in each of its versions.
std::vector<ResourceType> KueueTypes(const std::string& version);
// What a Kueue release "v0.<minor>" serves, version by version, preferred
// version first (docs/emulator.md gives the sources):
//   v0.9–v0.12   v1beta1 (no Cohort) and Cohort only as v1alpha1
//   v0.13–v0.14  v1beta1, Cohort included
//   v0.15–v0.16  v1beta2 and v1beta1
//   v0.17 on     v1beta2
// Empty for a release that is not "v0.<minor>" with minor >= 9.
std::vector<ResourceType> KueueReleaseTypes(const std::string& release);

// The cluster autoscaler's ProvisioningRequest (autoscaling.x-k8s.io/v1).
std::vector<ResourceType> ProvisioningRequestTypes();

// JobSet (jobset.x-k8s.io/v1alpha2).
std::vector<ResourceType> JobSetTypes();

}  // namespace tpu::kubesim
