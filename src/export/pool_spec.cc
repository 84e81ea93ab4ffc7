// SpecOfPool: see pool_spec.h.
#include "export/pool_spec.h"

#include <vector>

#include "catalog/catalog.h"
#include "export/yaml_emit.h"
#include "plan/capacity_shape.h"
#include "plan/desired.h"
#include "plan/normalize.h"
#include "plan/ownership.h"

namespace tpu::exporter {
namespace {

// The scopes GKE gives a node pool whose create says none (GKE's node
// service-account defaults; the emulator fills the same list).
const std::vector<std::string>& DefaultScopes() {
  static const std::vector<std::string> s = plan::NormalScopes(
      {"devstorage.read_only", "logging.write", "monitoring", "service.management.readonly", "servicecontrol",
       "trace.append"});
  return s;
}

// spec.capacity; false (and why) for a pool that consumes any reservation.
bool Capacity(const cloud::NodePool& lp, const cloud::Cluster& c, YAML::Node& s, std::string* why_not) {
  if (lp.flex_start) {
    s["capacity"]["type"] = "flexStart";
  } else if (lp.spot) {
    s["capacity"]["type"] = "spot";
  } else if (lp.reservation_affinity && lp.reservation_affinity->consume_reservation_type == "SPECIFIC_RESERVATION" &&
             !lp.reservation_affinity->values.empty()) {
    const std::string& v = lp.reservation_affinity->values[0];
    s["capacity"]["type"] = "reservation";
    const std::string prefix = "projects/";
    size_t r = v.find("/reservations/");
    if (v.rfind(prefix, 0) == 0 && r != std::string::npos) {
      std::string project = v.substr(prefix.size(), r - prefix.size());
      s["capacity"]["reservation"] = v.substr(r + 14);
      if (project != c.project) s["capacity"]["reservationProject"] = project;
    } else {
      s["capacity"]["reservation"] = v;
    }
  } else if (lp.reservation_affinity && lp.reservation_affinity->consume_reservation_type == "ANY_RESERVATION") {
    *why_not = "it consumes any reservation (a TPUNodePool names one)";
    return false;
  }
  return true;
}

// spec.autoscaling or spec.nodeCount, when they differ from one slice's VMs.
void Size(const cloud::NodePool& lp, bool multi, int vms, YAML::Node& s) {
  const bool autoscaled = lp.autoscaling && lp.autoscaling->enabled;
  if (autoscaled && !lp.flex_start) {
    YAML::Node as(YAML::NodeType::Map);
    if (!multi) {
      if (lp.autoscaling->min_node_count) as["minNodeCount"] = lp.autoscaling->min_node_count;
      as["maxNodeCount"] = lp.autoscaling->max_node_count;
    }
    s["autoscaling"] = as;
  } else if (lp.flex_start && !multi && lp.autoscaling) {
    s["autoscaling"]["maxNodeCount"] = lp.autoscaling->max_node_count;
  } else if (!multi && lp.node_count != vms) {
    s["nodeCount"] = lp.node_count;
  }
}

// The annotations ownership calls for, and the resource labels that are the
// user's own: a manifest that sets resourceLabels owns the whole set, markers
// included, so on a pool still to adopt they wait for the adoption.
void Ownership(const cloud::NodePool& lp, const std::string& target_key, manifest::Annotations* a, YAML::Node& nc) {
  plan::Ownership own = plan::PoolOwnership(lp, target_key);
  const cloud::StringMap rl = lp.resource_labels.value_or(cloud::StringMap{});
  a->adopt = own != plan::Ownership::kOwned;
  a->prevent_destroy = own == plan::Ownership::kOwned && rl.count(plan::kPreventDestroyLabel);
  a->abandon = own == plan::Ownership::kOwned && rl.count(plan::kDeletionPolicyLabel);
  if (own != plan::Ownership::kOwned) return;
  cloud::StringMap mine;
  for (const auto& [k, v] : rl)
    if (!plan::IsSystemResourceLabel(k) && k != cloud::kManagedLabel && k != cloud::kTargetHashLabel &&
        k != plan::kPreventDestroyLabel && k != plan::kDeletionPolicyLabel)
      mine[k] = v;
  if (!mine.empty()) nc["resourceLabels"] = StringMapNode(mine);
}

// spec.nodeConfig: what someone set, without what GKE adds or defaults.
YAML::Node NodeConfig(const cloud::NodePool& lp, const std::string& target_key, manifest::Annotations* a) {
  YAML::Node nc(YAML::NodeType::Map);
  cloud::StringMap labels;
  for (const auto& [k, v] : lp.labels.value_or(cloud::StringMap{}))
    if (!plan::IsSystemNodeLabel(k)) labels[k] = v;
  if (!labels.empty()) nc["labels"] = StringMapNode(labels);
  std::vector<cloud::NodeTaint> taints = plan::NormalTaints(lp.taints.value_or(std::vector<cloud::NodeTaint>{}));
  if (!taints.empty()) {
    YAML::Node tn(YAML::NodeType::Sequence);
    for (const auto& t : taints) {
      YAML::Node one;
      one["key"] = t.key;
      if (!t.value.empty()) one["value"] = t.value;
      one["effect"] = KubeEffect(t.effect);
      tn.push_back(one);
    }
    nc["taints"] = tn;
  }
  Ownership(lp, target_key, a, nc);
  if (lp.service_account && !lp.service_account->empty() && *lp.service_account != "default")
    nc["serviceAccount"] = *lp.service_account;
  if (lp.oauth_scopes && plan::NormalScopes(*lp.oauth_scopes) != DefaultScopes())
    nc["oauthScopes"] = ListNode(plan::NormalScopes(*lp.oauth_scopes));
  if (lp.disk_size_gb && *lp.disk_size_gb != plan::kDefaultDiskSizeGb) nc["diskSizeGb"] = *lp.disk_size_gb;
  if (lp.disk_type && !lp.disk_type->empty() && *lp.disk_type != plan::kDefaultDiskType)
    nc["diskType"] = *lp.disk_type;
  if (lp.image_type && !plan::EqualsIgnoreCase(*lp.image_type, "COS_CONTAINERD")) nc["imageType"] = *lp.image_type;
  if (lp.tags && !lp.tags->empty()) nc["tags"] = ListNode(*lp.tags);
  cloud::StringMap md = lp.metadata.value_or(cloud::StringMap{});
  if (auto it = md.find("disable-legacy-endpoints"); it != md.end() && it->second == "true") md.erase(it);
  if (!md.empty()) nc["metadata"] = StringMapNode(md);
  return nc;
}

}  // namespace

PoolSpec SpecOfPool(const cloud::NodePool& lp, const cloud::Cluster& c, const std::string& target_key,
                    const std::map<std::string, std::string>& policy_topologies) {
  PoolSpec out;
  const catalog::Generation* gen = catalog::GenerationOfMachineType(lp.machine_type);
  plan::CapacityShape shape = plan::ShapeOfPool(lp, policy_topologies);
  if (!gen || shape.topology.empty()) {
    out.why_not = "its TPU topology is unknown";
    return out;
  }
  auto resolved = catalog::ResolveShape(gen->accelerator, shape.topology, lp.machine_type);
  auto derived = catalog::ResolveShape(gen->accelerator, shape.topology);
  if (!resolved.ok()) {
    out.why_not = resolved.status().message();
    return out;
  }
  YAML::Node& s = out.spec;
  s["accelerator"] = gen->accelerator;
  s["topology"] = shape.topology;
  if (!derived.ok() || derived->machine_type.name != lp.machine_type) s["machineType"] = lp.machine_type;
  if (lp.locations.size() == 1 && lp.locations[0] != c.location) s["location"] = lp.locations[0];
  else if (lp.locations.size() > 1) {
    out.why_not = "it spans several zones (a TPUNodePool names one)";
    return out;
  }
  const bool multi = resolved->multi_host;
  if (lp.placement_policy && !lp.placement_policy->policy_name.empty() && multi) {
    // The default name is "<name>-wp"; written only when it differs (checked by the caller).
    s["workloadPolicy"] = plan::LastSegment(lp.placement_policy->policy_name);
  }
  if (!Capacity(lp, c, s, &out.why_not)) return out;
  Size(lp, multi, resolved->vms, s);
  YAML::Node nc = NodeConfig(lp, target_key, &out.annotations);
  if (nc.size()) s["nodeConfig"] = nc;
  if (lp.management && !lp.flex_start && (!lp.management->auto_repair || !lp.management->auto_upgrade)) {
    if (!lp.management->auto_repair) s["management"]["autoRepair"] = false;
    if (!lp.management->auto_upgrade) s["management"]["autoUpgrade"] = false;
  } else if (lp.flex_start && lp.management && !lp.management->auto_upgrade) {
    s["management"]["autoUpgrade"] = false;
  }
  out.text = Emit(s) + (out.annotations.adopt ? "adopt" : "") + (out.annotations.prevent_destroy ? "pd" : "") +
             (out.annotations.abandon ? "ab" : "");
  return out;
}

}  // namespace tpu::exporter
