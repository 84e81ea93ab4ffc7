// Desired node pools and Compute objects from a manifest target.
#include "plan/desired.h"

#include <algorithm>

#include "catalog/catalog.h"
#include "node_bootstrap_script.h"
#include "plan/fingerprint.h"
#include "plan/node_labels.h"
#include "plan/normalize.h"
#include "plan/ownership.h"

namespace tpu::plan {
namespace {

const char* ProvisioningModelName(manifest::ProvisioningModel m) {
  switch (m) {
    case manifest::ProvisioningModel::kSpot: return "SPOT";
    case manifest::ProvisioningModel::kReservationBound: return "RESERVATION_BOUND";
    case manifest::ProvisioningModel::kStandard: return "STANDARD";
  }
  return "STANDARD";
}

// A stable text of everything a template says, for its content hash.
std::string TemplateContent(const cloud::InstanceTemplate& t) {
  std::string s;
  auto add = [&s](std::string_view k, std::string_view v) {
    s.append(k).append("=").append(v).append("\n");
  };
  add("machineType", t.machine_type);
  add("provisioningModel", t.provisioning_model);
  add("reservation", t.reservation);
  add("sourceImage", t.source_image);
  add("subnetwork", t.subnetwork);
  add("bootDiskSizeGb", t.boot_disk_size_gb ? std::to_string(*t.boot_disk_size_gb) : "");
  add("diskType", t.disk_type.value_or(""));
  for (const auto& a : t.service_accounts) add("serviceAccount", a);
  for (const auto& tag : t.network_tags) add("networkTag", tag);
  // The join script is content but not identity: a new tpu-provisioner with
  // a changed join.sh must not replace every running slice (a BULK MIG's new
  // template is a replace). It reaches new groups, and groups whose template
  // changes for another reason (docs/architecture.md, "TPUNodeGroup nodes").
  for (const auto& [k, v] : t.metadata)
    if (k != "startup-script") add("metadata." + k, v);
  add("onHostMaintenance", t.on_host_maintenance);
  add("instanceTerminationAction", t.instance_termination_action);
  return s;
}

// What the tpu-operator does with a termination: reservation-bound VMs are
// deleted (Compute's bulk-mode page: "On VM termination: Delete"), Spot VMs
// stopped (its instance template converter).
std::string TerminationAction(manifest::ProvisioningModel m) {
  switch (m) {
    case manifest::ProvisioningModel::kReservationBound: return "DELETE";
    case manifest::ProvisioningModel::kSpot: return "STOP";
    case manifest::ProvisioningModel::kStandard: return "";
  }
  return "";
}

// The node pool autoscaling a manifest asks for: a multi-host slice as a
// whole (0 ↔ its VMs), in whichever zone has them (locationPolicy ANY), as
// xpk's scale-to-zero and flex-start slices; single-host pools as written.
std::optional<cloud::NodePoolAutoscaling> PoolAutoscaling(const manifest::TPUNodePool& spec) {
  if (!spec.autoscaling) return std::nullopt;
  if (!spec.autoscaling->enabled) return cloud::NodePoolAutoscaling{false, 0, 0, ""};
  const bool any = spec.shape.multi_host || spec.capacity.type == manifest::CapacityType::kFlexStart;
  return cloud::NodePoolAutoscaling{true, spec.autoscaling->min_node_count,
                                    spec.autoscaling->max_node_count, any ? "ANY" : ""};
}

// initialNodeCount: an autoscaled slice and a flex-start pool start empty
// (unless a slice's nodeCount is written: then it starts whole).
int InitialNodeCount(const manifest::TPUNodePool& spec) {
  if (spec.capacity.type == manifest::CapacityType::kFlexStart) return 0;
  if (spec.shape.multi_host && spec.autoscaled() && !spec.node_count_set) return 0;
  return spec.node_count > 0 ? spec.node_count : spec.shape.vms;
}

// Sent only when the manifest says something (or flex-start needs
// auto-repair off); a field left out is GKE's default, which is on.
std::optional<cloud::NodeManagement> PoolManagement(const manifest::TPUNodePool& spec) {
  const bool flex = spec.capacity.type == manifest::CapacityType::kFlexStart;
  if (!spec.management && !flex) return std::nullopt;
  const manifest::Management m = spec.management.value_or(manifest::Management{});
  return cloud::NodeManagement{flex ? false : m.auto_repair.value_or(true), m.auto_upgrade.value_or(true)};
}

}  // namespace

std::string SourceOf(const manifest::SourceLocation& where, const std::string& kind,
                     const std::string& name) {
  std::string s = where.file;
  if (where.line > 0) s += ":" + std::to_string(where.line) + ":" + std::to_string(where.column);
  return s + " " + kind + "/" + name;
}

std::string AcceleratorTopologyMode(const std::string& connection_mode) {
  // The tpu-operator's workload policy for STATIC (its only mode) carries
  // acceleratorTopology alone, so the API's default applies: AUTO_CONNECT,
  // "the interconnected chips are pre-configured at the time of VM creation".
  // We send the same request.
  if (connection_mode == "STATIC") return "";
  return connection_mode;
}

std::string WorkloadPolicyName(const manifest::TPUNodePool& spec) {
  return spec.workload_policy.empty() ? spec.name + "-wp" : spec.workload_policy;
}

void SetCapacity(const manifest::Target& target, const manifest::Capacity& capacity, cloud::NodePool* p) {
  p->spot = false;
  p->flex_start = false;
  p->reservation_affinity.reset();
  switch (capacity.type) {
    case manifest::CapacityType::kOnDemand: break;
    case manifest::CapacityType::kSpot: p->spot = true; break;
    case manifest::CapacityType::kFlexStart: {
      // Flex-start goes through the Dynamic Workload Scheduler, never a reservation.
      p->flex_start = true;
      cloud::ReservationAffinity ra;
      ra.consume_reservation_type = "NO_RESERVATION";
      p->reservation_affinity = std::move(ra);
      break;
    }
    case manifest::CapacityType::kReservation: {
      cloud::ReservationAffinity ra;
      ra.consume_reservation_type = "SPECIFIC_RESERVATION";
      ra.key = kReservationKey;
      const std::string& rp = capacity.reservation_project;
      ra.values.push_back(rp.empty() || rp == target.project
                              ? capacity.reservation
                              : "projects/" + rp + "/reservations/" + capacity.reservation);
      p->reservation_affinity = std::move(ra);
      break;
    }
  }
}

cloud::NodePool DesiredNodePool(const manifest::Target& target, const manifest::TPUNodePool& spec,
                                int slice) {
  cloud::NodePool p;
  p.name = spec.PoolName(slice);
  p.machine_type = spec.shape.machine_type.name;
  const auto& nc = spec.node_config;
  p.disk_size_gb = nc.disk_size_gb;
  p.disk_type = nc.disk_type;
  p.image_type = nc.image_type;
  p.service_account = nc.service_account;
  p.oauth_scopes = nc.oauth_scopes;
  p.labels = nc.labels;
  if (nc.taints) {
    std::vector<cloud::NodeTaint> taints;
    for (const auto& t : *nc.taints) taints.push_back({t.key, t.value, GkeTaintEffect(t.effect)});
    p.taints = std::move(taints);
  }
  cloud::StringMap rl = nc.resource_labels.value_or(cloud::StringMap{});
  rl[cloud::kManagedLabel] = "true";
  rl[cloud::kTargetHashLabel] = TargetHash(target.Key());
  if (spec.annotations.prevent_destroy) rl[kPreventDestroyLabel] = "true";
  if (spec.annotations.abandon) rl[kDeletionPolicyLabel] = "abandon";
  p.resource_labels = std::move(rl);
  p.tags = nc.tags;
  p.metadata = nc.metadata;

  SetCapacity(target, spec.capacity, &p);
  switch (spec.shape.placement) {
    case catalog::Placement::kNone: break;
    case catalog::Placement::kCompact:
      p.placement_policy = cloud::PlacementPolicy{"COMPACT", spec.shape.topology, ""};
      break;
    case catalog::Placement::kWorkloadPolicy:
      p.placement_policy = cloud::PlacementPolicy{"", "", WorkloadPolicyName(spec)};
      break;
  }

  p.node_count = InitialNodeCount(spec);
  p.autoscaling = PoolAutoscaling(spec);
  p.management = PoolManagement(spec);
  p.version = spec.version;
  if (!spec.location.empty()) p.locations = {spec.location};
  return p;
}

namespace {

// The slices of a TPUNodePool, and its workload policy when its shape needs one.
void AddPool(const manifest::Target& target, const manifest::TPUNodePool& spec, DesiredTarget* d) {
  for (int i = 0; i < spec.slices; ++i) {
    DesiredPool dp;
    dp.pool = DesiredNodePool(target, spec, i);
    dp.spec = &spec;
    dp.slice = i;
    dp.multi_host = spec.shape.multi_host;
    dp.autoscaled = spec.autoscaled();
    // What the slice holds, or may hold once scaled up (possible capacity).
    dp.chips = PoolChips(dp.pool.machine_type, spec.node_count);
    if (dp.chips == 0) dp.chips = spec.shape.chips;
    dp.hosts = spec.node_count;
    d->pools.push_back(std::move(dp));
  }
  if (spec.shape.placement == catalog::Placement::kWorkloadPolicy) {
    DesiredCompute<cloud::WorkloadPolicy> wp;
    wp.owner = "TPUNodePool/" + spec.name;
    wp.source = SourceOf(spec.where, "TPUNodePool", spec.name);
    wp.annotations = spec.annotations;
    wp.resource.name = WorkloadPolicyName(spec);
    wp.resource.region = RegionOfZone(spec.location);
    wp.resource.type = "HIGH_THROUGHPUT";
    wp.resource.accelerator_topology = spec.shape.topology;
    wp.resource.description =
        ComputeDescription({target.Key(), wp.owner, spec.annotations.prevent_destroy});
    d->policies.push_back(std::move(wp));
  }

}

// A group's instance template from its instanceConfig; `template_path` becomes its path.
void AddTemplate(const manifest::Target& target, const manifest::TPUNodeGroup& g, const std::string& owner,
                 const std::string& source, const std::string& description, DesiredTarget* d,
                 std::string* template_path) {
  const auto& ic = *g.instance_config;
  DesiredCompute<cloud::InstanceTemplate> it;
  it.owner = owner;
  it.source = source;
  it.annotations = g.annotations;
  cloud::InstanceTemplate& t = it.resource;
  t.description = description;
  t.machine_type = ic.machine_type;
  t.provisioning_model = ProvisioningModelName(ic.provisioning_model);
  t.reservation = ic.reservation;
  t.source_image = ic.image;
  t.subnetwork = ic.subnetwork;
  t.boot_disk_size_gb = ic.boot_disk_size_gb;
  t.disk_type = ic.disk_type;
  t.service_accounts = ic.service_accounts;
  t.network_tags = ic.network_tags;
  t.metadata = ic.metadata;
  // TPU VMs cannot live-migrate: they stop for host maintenance (Google's
  // bulk-MIG examples, the tpu-operator's templates).
  t.on_host_maintenance = "TERMINATE";
  t.instance_termination_action = TerminationAction(ic.provisioning_model);
  if (g.bootstrap_kubernetes) {
    // What the node bootstrap reads (docs/architecture.md, "TPUNodeGroup
    // nodes"): the kubelet's labels, the slice's topology for the device
    // plugin, and the join script. The join token comes later, per VM.
    t.metadata["kubernetes-version"] = g.bootstrap_kubernetes->version;
    t.metadata["kubernetes-control-plane-ip"] = g.bootstrap_kubernetes->control_plane_ip;
    t.metadata["kube-labels"] = KubeLabelsValue(NodeGroupLabels(g));
    if (!g.topology.empty()) t.metadata["accelerator_topology_id"] = g.topology;
    t.metadata["startup-script"] = std::string(nodes::kNodeBootstrapScript);
  }
  // Templates are immutable: the name carries a hash of the content, so any
  // change is a new template (and the MIG moves to it).
  t.name = g.name + "-" + Fnv1aHex(TemplateContent(t)).substr(0, 8);
  *template_path = "projects/" + target.project + "/global/instanceTemplates/" + t.name;
  d->templates.push_back(std::move(it));
}

// A TPUNodeGroup: its workload policy (multi-host), its template, its MIG.
void AddGroup(const manifest::Target& target, const manifest::TPUNodeGroup& g, DesiredTarget* d) {
  const std::string owner = "TPUNodeGroup/" + g.name;
  const std::string source = SourceOf(g.where, "TPUNodeGroup", g.name);
  const std::string description =
      ComputeDescription({target.Key(), owner, g.annotations.prevent_destroy});
  const std::string region = RegionOfZone(g.node_location);
  const bool multi_host = g.shape ? g.shape->multi_host : g.node_count > 1;

  std::string policy_path;
  if (multi_host && !g.topology.empty()) {
    DesiredCompute<cloud::WorkloadPolicy> wp;
    wp.owner = owner;
    wp.source = source;
    wp.annotations = g.annotations;
    wp.resource.name = g.name + "-wp";
    wp.resource.region = region;
    wp.resource.type = "HIGH_THROUGHPUT";
    wp.resource.accelerator_topology = g.topology;
    wp.resource.accelerator_topology_mode = AcceleratorTopologyMode(g.accelerator_connection_mode);
    wp.resource.description = description;
    policy_path = "projects/" + target.project + "/regions/" + region + "/resourcePolicies/" +
                  wp.resource.name;
    d->policies.push_back(std::move(wp));
  }

  std::string template_path = ResourcePath(g.instance_template_uri);
  std::string machine_type;
  if (g.instance_config) {
    machine_type = g.instance_config->machine_type;
    AddTemplate(target, g, owner, source, description, d, &template_path);
  }
  DesiredCompute<cloud::InstanceGroupManager> mig;
  mig.owner = owner;
  mig.source = source;
  mig.annotations = g.annotations;
  mig.multi_host = multi_host;
  mig.template_immutable_replace = g.target_size_policy_mode == manifest::TargetSizePolicyMode::kBulk;
  cloud::InstanceGroupManager& m = mig.resource;
  m.name = g.name;
  m.zone = g.node_location;
  m.description = description;
  m.instance_template = template_path;
  m.base_instance_name = g.name;
  m.target_size = g.node_count;
  m.target_size_policy_mode = mig.template_immutable_replace ? "BULK" : "INDIVIDUAL";
  // The slice's workload policy is the group's (resourcePolicies.workloadPolicy).
  m.workload_policy = policy_path;
  int per_vm = catalog::ChipsPerVm(machine_type);
  if (per_vm == 0 && g.shape) per_vm = g.shape->machine_type.chips_per_vm;
  mig.chips = per_vm * g.node_count;
  mig.hosts = g.node_count;
  d->groups.push_back(std::move(mig));

}

}  // namespace

DesiredTarget BuildDesired(const manifest::Target& target) {
  DesiredTarget d;
  size_t slices = 0;
  for (const auto& spec : target.pools) slices += static_cast<size_t>(std::max(spec.slices, 0));
  d.pools.reserve(slices);  // a node pool is large to move
  for (const auto& spec : target.pools) AddPool(target, spec, &d);
  for (const auto& g : target.groups) AddGroup(target, g, &d);
  return d;
}

}  // namespace tpu::plan
