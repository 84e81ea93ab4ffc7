// BuildSlice: policy checks, machine type from the TPU request, the create body.
#include "demand/slice_request.h"

#include <algorithm>

#include "demand/names.h"
#include "plan/normalize.h"

namespace tpu::demand {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

const char* CapacityName(manifest::CapacityType t) {
  switch (t) {
    case manifest::CapacityType::kOnDemand: return "onDemand";
    case manifest::CapacityType::kSpot: return "spot";
    case manifest::CapacityType::kReservation: return "reservation";
    case manifest::CapacityType::kFlexStart: return "flexStart";
  }
  return "onDemand";
}

bool IsZone(const std::string& location) {
  // us-east5-b: three dash-separated parts, the last one a letter.
  return std::count(location.begin(), location.end(), '-') == 2 && location.size() >= 2 &&
         location[location.size() - 2] == '-';
}

}  // namespace

std::string NodeZone(const manifest::DemandPolicy& policy, const ClusterRef& cluster) {
  if (!policy.zone.empty()) return policy.zone;
  return IsZone(cluster.location) ? cluster.location : "";
}

Result<SliceRequest> BuildSlice(const manifest::DemandPolicy& policy, const ClusterRef& cluster,
                                const LeaderPod& leader) {
  const catalog::Generation* gen = catalog::FindGeneration(leader.accelerator);
  if (!gen) return Status::InvalidArgument("unknown TPU accelerator " + leader.accelerator);
  if (!Contains(policy.accelerators, gen->accelerator))
    return Status::PermissionDenied("accelerator " + gen->accelerator +
                                    " is not allowed by Cluster spec.demand.accelerators (" +
                                    Join(policy.accelerators) + ")");
  if (!policy.topologies.empty() && !Contains(policy.topologies, leader.topology))
    return Status::PermissionDenied("topology " + leader.topology +
                                    " is not allowed by Cluster spec.demand.topologies (" +
                                    Join(policy.topologies) + ")");

  // The TPU request is the chips of one VM: it picks the machine type.
  std::string machine_type;
  for (const auto& mt : gen->machine_types)
    if (mt.chips_per_vm == leader.tpu_request) machine_type = mt.name;
  if (machine_type.empty()) {
    std::string sizes;
    for (const auto& mt : gen->machine_types) sizes += (sizes.empty() ? "" : ", ") + std::to_string(mt.chips_per_vm);
    return Status::InvalidArgument("google.com/tpu request " + std::to_string(leader.tpu_request) +
                                   " matches no " + gen->name + " machine type (chips per VM: " + sizes + ")");
  }
  auto shape = catalog::ResolveShape(gen->accelerator, leader.topology, machine_type);
  if (!shape.ok()) return shape.status();

  manifest::CapacityType capacity = manifest::CapacityType::kOnDemand;
  if (leader.spot) capacity = manifest::CapacityType::kSpot;
  if (!leader.reservation.empty()) capacity = manifest::CapacityType::kReservation;
  if (leader.spot && !leader.reservation.empty())
    return Status::InvalidArgument("the pod selects both spot and reservation " + leader.reservation);
  if (std::find(policy.capacity_types.begin(), policy.capacity_types.end(), capacity) ==
      policy.capacity_types.end()) {
    std::vector<std::string> allowed;
    for (auto t : policy.capacity_types) allowed.push_back(CapacityName(t));
    return Status::PermissionDenied(std::string("capacity type ") + CapacityName(capacity) +
                                    " is not allowed by Cluster spec.demand.capacityTypes (" +
                                    Join(allowed) + ")");
  }
  std::string zone = NodeZone(policy, cluster);
  if (zone.empty())
    return Status::FailedPrecondition("Cluster spec.demand.zone is not set and the cluster's location " +
                                      cluster.location + " is a region");

  SliceRequest r;
  r.shape = *shape;
  r.hosts = shape->vms;
  r.chips = shape->chips;
  cloud::NodePool& p = r.pool;
  p.name = PoolName(leader.jobset, leader.job_key);
  p.machine_type = machine_type;
  p.node_count = shape->vms;
  p.locations = {zone};
  if (!policy.service_account.empty()) p.service_account = policy.service_account;
  cloud::StringMap labels = policy.node_labels;
  // The pod's own selectors that GKE does not set itself, so the leader (and
  // only a pod asking the same) lands on this pool's nodes.
  for (const auto& [k, v] : leader.node_selector)
    if (k.rfind("cloud.google.com/", 0) != 0 && k.rfind("kubernetes.io/", 0) != 0) labels[k] = v;
  labels[kNodeJobSetLabel] = leader.jobset;
  labels[kNodeNamespaceLabel] = leader.ns;
  p.labels = std::move(labels);
  p.resource_labels = cloud::StringMap{{kOwnerLabel, kOwnerWorkload},
                                       {kPoolJobSetLabel, leader.jobset},
                                       {kPoolNamespaceLabel, leader.ns},
                                       {kPoolJobKeyLabel, leader.job_key.substr(0, 63)}};
  // Training runs for days: no auto-upgrade (as the TPU Provisioner), repairs
  // on. A cluster in a release channel refuses auto-upgrade off (400
  // "Auto_upgrade cannot be false when release_channel … is set."): there
  // GKE's defaults apply.
  if (cluster.release_channel.empty()) p.management = cloud::NodeManagement{true, false};
  if (capacity == manifest::CapacityType::kSpot) p.spot = true;
  if (capacity == manifest::CapacityType::kReservation) {
    cloud::ReservationAffinity ra;
    ra.consume_reservation_type = "SPECIFIC_RESERVATION";
    ra.key = plan::kReservationKey;
    ra.values = {leader.reservation};
    p.reservation_affinity = std::move(ra);
  }
  switch (shape->placement) {
    case catalog::Placement::kNone: break;
    case catalog::Placement::kCompact:
      p.placement_policy = cloud::PlacementPolicy{"COMPACT", shape->topology, ""};
      break;
    case catalog::Placement::kWorkloadPolicy: {
      cloud::WorkloadPolicy wp;
      wp.name = p.name + "-wp";
      wp.region = zone.substr(0, zone.size() - 2);
      wp.type = "HIGH_THROUGHPUT";
      wp.accelerator_topology = shape->topology;
      wp.description = WorkloadPolicyDescription(p.name);
      p.placement_policy = cloud::PlacementPolicy{"", "", wp.name};
      r.workload_policy = std::move(wp);
      break;
    }
  }
  return r;
}

}  // namespace tpu::demand
