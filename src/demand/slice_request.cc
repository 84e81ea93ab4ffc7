// BuildSlice: policy checks, machine type from the TPU request, the create body.
#include "demand/slice_request.h"

#include <algorithm>

#include "demand/names.h"
#include "plan/fingerprint.h"
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

namespace {

// The pod's nodeSelectors that become node labels of its pool, so the leader
// (and only a pod asking the same) lands there. As the GKE TPU Provisioner:
// not cloud.google.com/* or google.com/* (GKE sets those itself, or they mean
// capacity), except ICI resiliency and the location hint, which GKE does not
// set. Unlike it, not kubernetes.io/* or k8s.io/* either: the kubelet refuses
// to register with labels in those namespaces.
bool PassedThrough(const std::string& key) {
  if (key == kIciResiliencySelector || key == kLocationHintSelector) return true;
  for (const char* prefix : {"cloud.google.com/", "google.com/"})
    if (key.rfind(prefix, 0) == 0) return false;
  for (const char* ns : {"kubernetes.io/", "k8s.io/"}) {
    auto slash = key.find('/');
    if (slash == std::string::npos) continue;
    std::string domain = key.substr(0, slash + 1);
    std::string n(ns);
    if (domain == n || (domain.size() > n.size() && domain.compare(domain.size() - n.size() - 1, n.size() + 1, "." + n) == 0))
      return false;
  }
  return true;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string> SplitCsv(const std::string& csv) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= csv.size()) {
    size_t comma = csv.find(',', start);
    std::string item = Trim(csv.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// "vpc1:subnet1, vpc2:subnet2", the original's annotation format.
Result<std::vector<cloud::AdditionalNodeNetwork>> ParseNetworks(const std::string& csv) {
  std::vector<cloud::AdditionalNodeNetwork> out;
  for (const auto& pair : SplitCsv(csv)) {
    auto colon = pair.find(':');
    std::string net = colon == std::string::npos ? "" : Trim(pair.substr(0, colon));
    std::string sub = colon == std::string::npos ? "" : Trim(pair.substr(colon + 1));
    if (net.empty() || sub.empty())
      return Status::InvalidArgument(std::string("annotation ") + kCompatAdditionalNetworks +
                                     ": expected network:subnetwork, got \"" + pair + "\"");
    out.push_back({net, sub});
  }
  return out;
}

}  // namespace

std::string ReservationValue(const LeaderPod& leader) {
  if (leader.reservation_project.empty()) return leader.reservation;
  return "projects/" + leader.reservation_project + "/reservations/" + leader.reservation;
}

namespace {

// The TPU request is the chips of one VM: it picks the machine type.
Result<std::string> MachineTypeFor(const manifest::DemandPolicy& policy, const catalog::Generation& gen,
                                   const LeaderPod& leader) {
  const int per_vm = leader.Request(policy.tpu_resource);
  for (const auto& mt : gen.machine_types)
    if (mt.chips_per_vm == per_vm) return mt.name;
  std::string sizes;
  for (const auto& mt : gen.machine_types) sizes += (sizes.empty() ? "" : ", ") + std::to_string(mt.chips_per_vm);
  return Status::InvalidArgument(policy.tpu_resource + " request " + std::to_string(per_vm) + " matches no " +
                                 gen.name + " machine type (chips per VM: " + sizes + ")");
}

// The capacity type the pod selects, if the policy allows it. Spot and a
// reservation together are refused: a spot VM is not a reserved one, so the
// pod would get capacity it did not ask for (the original made a spot pool
// with reservation affinity and left the outcome to the cloud).
Result<manifest::CapacityType> CapacityFor(const manifest::DemandPolicy& policy, const LeaderPod& leader) {
  if (leader.spot && !leader.reservation.empty())
    return Status::InvalidArgument("the pod selects both spot (cloud.google.com/gke-spot) and reservation " +
                                   ReservationValue(leader) + " (cloud.google.com/reservation-name); choose one");
  if (!leader.reservation_project.empty() && leader.reservation.empty())
    return Status::InvalidArgument("the pod selects cloud.google.com/reservation-project " +
                                   leader.reservation_project + " without cloud.google.com/reservation-name");
  manifest::CapacityType capacity = manifest::CapacityType::kOnDemand;
  if (leader.spot) capacity = manifest::CapacityType::kSpot;
  if (!leader.reservation.empty()) capacity = manifest::CapacityType::kReservation;
  if (std::find(policy.capacity_types.begin(), policy.capacity_types.end(), capacity) !=
      policy.capacity_types.end())
    return capacity;
  std::vector<std::string> allowed;
  for (auto t : policy.capacity_types) allowed.push_back(CapacityName(t));
  return Status::PermissionDenied(std::string("capacity type ") + CapacityName(capacity) +
                                  " is not allowed by Cluster spec.demand.capacityTypes (" + Join(allowed) + ")");
}

// Node options: the pod's annotations where the original reads them, else the policy.
Status SetNodeOptions(const manifest::DemandPolicy& policy, const LeaderPod& leader, cloud::NodePool& p) {
  std::string sa = policy.service_account;
  if (leader.node_service_account && *leader.node_service_account != sa) {
    if (!Contains(policy.allowed_service_accounts, *leader.node_service_account))
      return Status::PermissionDenied(std::string("node service account ") + *leader.node_service_account +
                                      " (annotation " + kCompatNodeServiceAccount +
                                      ") is not in Cluster spec.demand.allowedServiceAccounts");
    sa = *leader.node_service_account;
  }
  if (!sa.empty()) p.service_account = sa;
  if (!leader.additional_networks.empty()) {
    auto nets = ParseNetworks(leader.additional_networks);
    if (!nets.ok()) return nets.status();
    p.additional_node_networks = *nets;
  } else {
    for (const auto& [net, sub] : policy.additional_node_networks) p.additional_node_networks.push_back({net, sub});
  }
  if (!policy.tags.empty()) p.tags = policy.tags;
  if (policy.max_pods_per_node > 0) p.max_pods_per_node = policy.max_pods_per_node;
  p.secure_boot = policy.secure_boot;
  p.integrity_monitoring = true;  // as the original; GKE's default too
  if (!policy.secondary_boot_disk.empty())
    p.secondary_boot_disks = {{policy.secondary_boot_disk, "CONTAINER_IMAGE_CACHE"}};
  if (!policy.disk_type.empty()) p.disk_type = policy.disk_type;
  if (!policy.boot_disk_kms_key.empty()) p.boot_disk_kms_key = policy.boot_disk_kms_key;
  return Status::OK();
}

// Node labels: the policy's, the pod's passed-through selectors and copied
// labels, and the JobSet's. Returns the selectors that shape the pool (for its
// spec hash).
std::string SetNodeLabels(const manifest::DemandPolicy& policy, const LeaderPod& leader, cloud::NodePool& p) {
  cloud::StringMap labels = policy.node_labels;
  std::string selected;
  for (const auto& [k, v] : leader.node_selector) {
    if (!PassedThrough(k)) continue;
    labels[k] = v;
    selected += k + "=" + v + ";";
  }
  std::vector<std::string> copy = policy.pod_labels_to_nodes;
  for (const auto& k : SplitCsv(leader.copy_labels)) copy.push_back(k);
  for (const auto& k : copy)
    if (auto it = leader.labels.find(k); it != leader.labels.end()) labels[k] = it->second;
  labels[kNodeJobSetLabel] = leader.jobset;
  labels[kNodeNamespaceLabel] = leader.ns;
  p.labels = std::move(labels);
  return selected;
}

// Spot's taint, a reservation's affinity, and the slice's placement (a
// compact placement or, for tpu7x, a workload policy of its own).
void SetCapacityAndPlacement(manifest::CapacityType capacity, const std::string& reservation,
                             const catalog::Shape& shape, const std::string& zone, SliceRequest& r) {
  cloud::NodePool& p = r.pool;
  if (capacity == manifest::CapacityType::kSpot) {
    p.spot = true;
    // The taint GKE's node auto-provisioning puts on Spot nodes, as the original does.
    p.taints = std::vector<cloud::NodeTaint>{{"cloud.google.com/gke-spot", "true", "NO_SCHEDULE"}};
  }
  if (capacity == manifest::CapacityType::kReservation) {
    cloud::ReservationAffinity ra;
    ra.consume_reservation_type = "SPECIFIC_RESERVATION";
    ra.key = plan::kReservationKey;
    ra.values = {reservation};
    p.reservation_affinity = std::move(ra);
  }
  switch (shape.placement) {
    case catalog::Placement::kNone: break;
    case catalog::Placement::kCompact:
      p.placement_policy = cloud::PlacementPolicy{"COMPACT", shape.topology, ""};
      break;
    case catalog::Placement::kWorkloadPolicy: {
      cloud::WorkloadPolicy wp;
      wp.name = p.name + "-wp";
      wp.region = zone.substr(0, zone.size() - 2);
      wp.type = "HIGH_THROUGHPUT";
      wp.accelerator_topology = shape.topology;
      wp.description = WorkloadPolicyDescription(p.name);
      p.placement_policy = cloud::PlacementPolicy{"", "", wp.name};
      r.workload_policy = std::move(wp);
      break;
    }
  }
}

}  // namespace

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
  auto machine_type = MachineTypeFor(policy, *gen, leader);
  if (!machine_type.ok()) return machine_type.status();
  auto shape = catalog::ResolveShape(gen->accelerator, leader.topology, *machine_type);
  if (!shape.ok()) return shape.status();
  auto capacity = CapacityFor(policy, leader);
  if (!capacity.ok()) return capacity.status();
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
  p.machine_type = *machine_type;
  p.node_count = shape->vms;
  p.locations = {zone};
  if (Status s = SetNodeOptions(policy, leader, p); !s.ok()) return s;
  const std::string selected = SetNodeLabels(policy, leader, p);

  std::string reservation = ReservationValue(leader);
  r.spec = plan::Fnv1aHex(*machine_type + "|" + std::to_string(shape->vms) + "|" + leader.topology + "|" +
                          (leader.spot ? "spot" : "") + "|" + reservation + "|" + selected);
  p.resource_labels = cloud::StringMap{{kOwnerLabel, kOwnerWorkload},
                                       {kPoolJobSetLabel, leader.jobset},
                                       {kPoolNamespaceLabel, leader.ns},
                                       {kPoolJobKeyLabel, leader.job_key.substr(0, 63)},
                                       {kPoolSpecLabel, r.spec}};
  if (!leader.jobset_uid.empty()) (*p.resource_labels)[kPoolJobSetUidLabel] = leader.jobset_uid;
  // Training runs for days: no auto-upgrade (as the TPU Provisioner), repairs
  // on. A cluster in a release channel refuses auto-upgrade off (400
  // "Auto_upgrade cannot be false when release_channel … is set."): there
  // GKE's defaults apply.
  if (cluster.release_channel.empty()) p.management = cloud::NodeManagement{true, false};
  SetCapacityAndPlacement(*capacity, reservation, *shape, zone, r);
  return r;
}

}  // namespace tpu::demand
