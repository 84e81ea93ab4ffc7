// Desired cloud resources built from one manifest target (docs/architecture.md, "The TPU catalog").
//
// A TPUNodePool becomes one cloud::NodePool per slice, `<name>-<i>`, with the
// ownership markers, the placement the catalog asks for (COMPACT + tpuTopology;
// policyName of a workload policy for tpu7x multi-host; none single-host),
// spot / reservation affinity / flex-start (flexStart, NO_RESERVATION,
// auto-repair off, autoscaled from 0), autoscaling (a multi-host slice as a
// whole, 0 ↔ its VMs, locationPolicy ANY), and only the optional fields the
// manifest sets (management included: left out, GKE's defaults apply). GKE
// adds the `google.com/tpu` and spot taints itself, so they are never part of
// the desired taints. A tpu7x multi-host pool also wants its workload policy.
// A TPUNodeGroup becomes a workload policy (multi-host), an instance template
// named by a hash of its content (templates are immutable, so a change is a
// new name; TERMINATE on host maintenance), and a MIG that carries the
// workload policy (resourcePolicies.workloadPolicy).
#pragma once

#include <string>
#include <vector>

#include "cloud/types.h"
#include "manifest/types.h"

namespace tpu::plan {

struct DesiredPool {
  cloud::NodePool pool;
  const manifest::TPUNodePool* spec = nullptr;  // points into the Target
  int slice = 0;
  bool multi_host = false;
  bool autoscaled = false;  // chips and hosts are what it may scale up to
  int chips = 0;  // per slice (node count × chips per VM; an autoscaled pool's maximum)
  int hosts = 0;  // VMs per slice, likewise
};

// A Compute object and the manifest object that wants it.
template <typename T>
struct DesiredCompute {
  T resource;
  std::string owner;   // "TPUNodeGroup/name" or "TPUNodePool/name"
  std::string source;  // "file:line:col Kind/name"
  manifest::Annotations annotations;
  int chips = 0;   // MIGs only: target size × chips per VM
  int hosts = 0;   // MIGs only
  bool multi_host = false;
  bool template_immutable_replace = false;  // MIGs: BULK mode (template change = replace)
};

struct DesiredTarget {
  std::vector<DesiredPool> pools;
  std::vector<DesiredCompute<cloud::WorkloadPolicy>> policies;
  std::vector<DesiredCompute<cloud::InstanceTemplate>> templates;
  std::vector<DesiredCompute<cloud::InstanceGroupManager>> groups;
};

// The template metadata keys a TPUNodeGroup's spec.bootstrapKubernetes puts
// there (export reads the first two back and drops the rest).
inline constexpr const char* kBootstrapMetadataKeys[] = {"kubernetes-version", "kubernetes-control-plane-ip",
                                                         "kube-labels", "accelerator_topology_id", "startup-script"};

// REQUIRES: !target.blocked() (shapes are resolved).
DesiredTarget BuildDesired(const manifest::Target& target);

// One slice's node pool.
cloud::NodePool DesiredNodePool(const manifest::Target& target, const manifest::TPUNodePool& spec,
                                int slice);

// Sets `p`'s capacity fields (spot, flex-start, reservation affinity) as
// `capacity` asks, clearing the others.
void SetCapacity(const manifest::Target& target, const manifest::Capacity& capacity, cloud::NodePool* p);

// A TPUNodeGroup's acceleratorConnectionMode as the workload policy's
// acceleratorTopologyMode ("" leaves the API's default, AUTO_CONNECT).
std::string AcceleratorTopologyMode(const std::string& connection_mode);

// The name of a tpu7x multi-host pool's workload policy: spec.workloadPolicy,
// or "<name>-wp" when the manifest leaves it out.
std::string WorkloadPolicyName(const manifest::TPUNodePool& spec);

// "file:line:col Kind/name", for Action::source.
std::string SourceOf(const manifest::SourceLocation& where, const std::string& kind,
                     const std::string& name);

}  // namespace tpu::plan
