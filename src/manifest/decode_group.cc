// DecodeGroup and DecodeCluster: TPUNodeGroup (the tpu-operator's schema) and
// Cluster (cluster.yaml) documents → typed values, with their cross-field rules.
#include "catalog/catalog.h"
#include "manifest/decode_util.h"

namespace tpu::manifest {
namespace {

std::string MachineTypeNames() {
  std::string names;
  for (const auto& g : catalog::Generations())
    for (const auto& m : g.machine_types) names += (names.empty() ? "" : ", ") + m.name;
  return names;
}

void DecodeInstanceConfig(DocReader& r, const YamlNode* ic, TPUNodeGroup::InstanceConfig* out) {
  out->machine_type = r.Str(ic, "machineType").value_or("");
  std::string model = r.Str(ic, "provisioningModel").value_or("STANDARD");
  if (model == "SPOT") out->provisioning_model = ProvisioningModel::kSpot;
  if (model == "RESERVATION_BOUND") out->provisioning_model = ProvisioningModel::kReservationBound;
  out->reservation = r.Str(ic, "reservation").value_or("");
  out->image = r.Str(ic, "image").value_or("");
  out->subnetwork = r.Str(ic, "subnetwork").value_or("");
  out->boot_disk_size_gb = r.Int(ic, "bootDiskSizeGB");
  out->disk_type = r.Str(ic, "diskType");
  out->service_accounts = r.List(ic, "serviceAccounts").value_or(std::vector<std::string>{});
  out->network_tags = r.List(ic, "networkTags").value_or(std::vector<std::string>{});
  out->metadata = r.Strings(ic, "metadata").value_or(StringMap{});
  if (r.Bad("spec.instanceConfig.provisioningModel")) return;
  if (out->provisioning_model == ProvisioningModel::kReservationBound && out->reservation.empty() &&
      !r.Bad("spec.instanceConfig.reservation"))
    r.Error(ic, "provisioningModel", "spec.instanceConfig.reservation",
            "required field is missing (provisioningModel RESERVATION_BOUND needs the reservation's name)");
  if (out->provisioning_model != ProvisioningModel::kReservationBound && r.Node(ic, "reservation"))
    r.Error(ic, "reservation", "spec.instanceConfig.reservation",
            "only valid with provisioningModel RESERVATION_BOUND (got " + model + ")");
}

// The slice a group's machine type and topology describe, and its node count.
void CheckGroupShape(DocReader& r, const YamlNode* spec, TPUNodeGroup* out) {
  const YamlNode* ic = r.Map(spec, "instanceConfig");
  if (!ic || out->instance_config->machine_type.empty() || r.Bad("spec.instanceConfig.machineType")) return;
  const std::string& mt = out->instance_config->machine_type;
  const catalog::Generation* gen = catalog::GenerationOfMachineType(mt);
  if (!gen) {
    r.Error(ic, "machineType", "spec.instanceConfig.machineType",
            "unknown TPU machine type \"" + mt + "\" (expected one of " + MachineTypeNames() + ")");
    return;
  }
  if (out->topology.empty() || r.Bad("spec.topology")) return;
  auto topo_only = catalog::ResolveShape(gen->accelerator, out->topology);
  if (!topo_only.ok()) {
    r.Error(spec, "topology", "spec.topology", topo_only.status().message());
    return;
  }
  auto shape = catalog::ResolveShape(gen->accelerator, out->topology, mt);
  if (!shape.ok()) {
    r.Error(ic, "machineType", "spec.instanceConfig.machineType", shape.status().message());
    return;
  }
  out->shape = *shape;
  if (!r.Bad("spec.nodeCount") && r.Node(spec, "nodeCount") && out->node_count != shape->vms)
    r.Error(spec, "nodeCount", "spec.nodeCount",
            "nodeCount " + std::to_string(out->node_count) + " contradicts topology " + shape->topology +
                ": a slice of " + mt + " has " + std::to_string(shape->vms) + " VM" + (shape->vms == 1 ? "" : "s"));
  if (shape->multi_host && out->target_size_policy_mode != TargetSizePolicyMode::kBulk &&
      !r.Bad("spec.targetSizePolicyMode"))
    r.Error(spec, r.Node(spec, "targetSizePolicyMode") ? "targetSizePolicyMode" : "topology",
            "spec.targetSizePolicyMode",
            "expected BULK for a multi-host slice (" + std::to_string(shape->vms) +
                " VMs must be created at once), got " + (r.Node(spec, "targetSizePolicyMode") ? "INDIVIDUAL" : "none"));
}

// "Bulk mode in MIGs is only supported with instance templates that specify
// either a reservation-bound or flex-start provisioning model" (Compute's
// "Create a MIG that uses the bulk mode"); the tpu-operator's schema offers
// only reservation-bound of those two.
void CheckBulkProvisioning(DocReader& r, const YamlNode* spec, const YamlNode* ic, const TPUNodeGroup* out) {
  if (out->target_size_policy_mode != TargetSizePolicyMode::kBulk) return;
  if (out->instance_config->provisioning_model == ProvisioningModel::kReservationBound) return;
  if (r.Bad("spec.instanceConfig.provisioningModel") || r.Bad("spec.targetSizePolicyMode")) return;
  const std::string model = r.Str(ic, "provisioningModel").value_or("STANDARD");
  r.Error(r.Node(ic, "provisioningModel") ? ic : spec,
          r.Node(ic, "provisioningModel") ? "provisioningModel" : "targetSizePolicyMode",
          "spec.instanceConfig.provisioningModel",
          "expected RESERVATION_BOUND with targetSizePolicyMode BULK, got " + model +
              " (Compute's bulk mode creates a slice's VMs at once only from reservation-bound or "
              "flex-start templates)");
}

}  // namespace

void DecodeGroup(DocReader& r, TPUNodeGroup* out) {
  const YamlNode* spec = r.Map(&r.doc().root(), "spec");
  if (!spec) return;
  out->project = r.Str(spec, "project").value_or("");
  out->node_location = r.Str(spec, "nodeLocation").value_or("");
  out->node_count = r.Int(spec, "nodeCount").value_or(0);
  out->min_node_count = r.Int(spec, "minNodeCount");
  out->topology = r.Str(spec, "topology").value_or("");
  out->accelerator_connection_mode = r.Str(spec, "acceleratorConnectionMode").value_or("STATIC");
  if (r.Str(spec, "targetSizePolicyMode").value_or("") == "BULK")
    out->target_size_policy_mode = TargetSizePolicyMode::kBulk;
  out->instance_template_uri = r.Str(spec, "instanceTemplateURI").value_or("");
  const YamlNode* ic = r.Map(spec, "instanceConfig");
  if (ic) {
    out->instance_config = TPUNodeGroup::InstanceConfig{};
    DecodeInstanceConfig(r, ic, &*out->instance_config);
  }
  if (const YamlNode* bk = r.Map(spec, "bootstrapKubernetes")) {
    out->bootstrap_kubernetes = TPUNodeGroup::BootstrapKubernetes{r.Str(bk, "version").value_or(""),
                                                                  r.Str(bk, "controlPlaneIP").value_or("")};
    if (!ic)
      r.Error(spec, "bootstrapKubernetes", "spec.bootstrapKubernetes",
              "only valid with instanceConfig (with instanceTemplateURI, your template bootstraps its nodes)");
  }
  bool has_uri = r.Node(spec, "instanceTemplateURI") != nullptr;
  if (ic && has_uri)
    r.Error(spec, "instanceTemplateURI", "spec.instanceTemplateURI",
            "set either instanceConfig or instanceTemplateURI, not both");
  if (!ic && !has_uri && !r.Bad("spec.instanceConfig"))
    r.Error(&r.doc().root(), "spec", "spec.instanceConfig",
            "required field is missing (expected instanceConfig, or instanceTemplateURI for a template you bring)");
  if (out->min_node_count && *out->min_node_count > out->node_count && !r.Bad("spec.nodeCount"))
    r.Error(spec, "minNodeCount", "spec.minNodeCount",
            "expected at most nodeCount (" + std::to_string(out->node_count) + "), got " +
                std::to_string(*out->min_node_count));
  if (ic) CheckGroupShape(r, spec, out);
  if (ic) CheckBulkProvisioning(r, spec, ic, out);
}

void DecodeCluster(DocReader& r, ClusterPolicy* out) {
  const YamlNode* spec = r.Map(&r.doc().root(), "spec");
  if (!spec) return;
  out->location = r.Str(spec, "location");
  out->prune = r.Bool(spec, "prune").value_or(true);
  out->max_delete_percent = r.Int(spec, "maxDeletePercent").value_or(50);
  if (r.Str(spec, "replaceStrategy").value_or("") == "CreateBeforeDelete")
    out->replace_strategy = ReplaceStrategy::kCreateBeforeDelete;
  out->suspend = r.Bool(spec, "suspend").value_or(false);
  if (const YamlNode* k = r.Map(spec, "kueue")) {
    KueuePolicy kueue;
    kueue.cluster_queue = r.Str(k, "clusterQueue").value_or("");
    kueue.cohort = r.Str(k, "cohort").value_or("");
    kueue.wait_for_workloads = r.Bool(k, "waitForWorkloads").value_or(true);
    kueue.hold_queue = r.Bool(k, "holdQueue").value_or(false);
    kueue.ready_mode = r.Str(k, "mode").value_or("declared") == "ready";
    kueue.flavor_name = r.Str(k, "flavorName").value_or("");
    kueue.scale_down_timeout = r.Str(k, "scaleDownTimeout").value_or("");
    if (kueue.cluster_queue.empty() == kueue.cohort.empty() && !r.Bad("spec.kueue.clusterQueue") &&
        !r.Bad("spec.kueue.cohort"))
      r.Error(spec, "kueue", "spec.kueue", "expected exactly one of clusterQueue or cohort (where the quota goes)");
    out->kueue = kueue;
  }
  if (const YamlNode* d = r.Map(spec, "demand")) {
    DemandPolicy demand;
    DecodeDemand(r, d, &demand);
    out->demand = std::move(demand);
  }
  if (r.Str(spec, "drift").value_or("correct") == "warn") out->drift = DriftMode::kWarn;
  if (r.Str(spec, "mode").value_or("") == "cleanupOnly") out->mode = TargetMode::kCleanupOnly;
  DecodeChangeWindows(r, spec, &out->change_windows);
}

}  // namespace tpu::manifest
