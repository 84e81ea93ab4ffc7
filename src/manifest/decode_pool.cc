// DecodePool: a TPUNodePool document's spec → TPUNodePool, with the catalog's
// shape and the rules the schema cannot say: topology for the accelerator,
// node counts of multi-host slices, generated pool names, capacity and
// workload-policy combinations, label and taint syntax.
#include "catalog/catalog.h"
#include "manifest/decode_util.h"
#include "manifest/names.h"

namespace tpu::manifest {
namespace {

std::string Plural(int n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

// Resolves accelerator, topology and machine type one at a time, so the
// error lands on the field that is wrong.
std::optional<catalog::Shape> ResolvePoolShape(DocReader& r, const YamlNode* spec) {
  auto acc = r.Str(spec, "accelerator");
  auto topo = r.Str(spec, "topology");
  auto mt = r.Str(spec, "machineType");
  if (!acc || r.Bad("spec.accelerator")) return std::nullopt;
  if (!catalog::FindGeneration(*acc)) {
    r.ErrorAt(*r.Node(spec, "accelerator"), "spec.accelerator", catalog::ResolveShape(*acc, "").status().message());
    return std::nullopt;
  }
  if (!topo || r.Bad("spec.topology")) return std::nullopt;
  auto shape = catalog::ResolveShape(*acc, *topo);
  if (!shape.ok()) {
    r.ErrorAt(*r.Node(spec, "topology"), "spec.topology", shape.status().message());
    return std::nullopt;
  }
  if (!mt) return *shape;
  if (r.Bad("spec.machineType")) return std::nullopt;
  shape = catalog::ResolveShape(*acc, *topo, *mt);
  if (!shape.ok()) {
    r.ErrorAt(*r.Node(spec, "machineType"), "spec.machineType", shape.status().message());
    return std::nullopt;
  }
  return *shape;
}

void DecodeCapacity(DocReader& r, const YamlNode* spec, Capacity* out) {
  const YamlNode* cap = r.Map(spec, "capacity");
  if (!cap) return;
  std::string type = r.Str(cap, "type").value_or("onDemand");
  if (type == "spot") out->type = CapacityType::kSpot;
  else if (type == "reservation") out->type = CapacityType::kReservation;
  else if (type == "flexStart") out->type = CapacityType::kFlexStart;
  out->reservation = r.Str(cap, "reservation").value_or("");
  out->reservation_project = r.Str(cap, "reservationProject").value_or("");
  if (r.Bad("spec.capacity.type")) return;
  if (out->type == CapacityType::kReservation && out->reservation.empty() && !r.Bad("spec.capacity.reservation"))
    r.Error(spec, "capacity", "spec.capacity.reservation",
            "required field is missing (capacity type reservation needs the reservation's name)");
  if (out->type != CapacityType::kReservation) {
    for (const char* key : {"reservation", "reservationProject"})
      if (r.Node(cap, key))
        r.Error(cap, key, std::string("spec.capacity.") + key,
                "only valid with capacity type reservation (got type " + type + ")");
  }
}

void DecodeNodeConfig(DocReader& r, const YamlNode* spec, NodeConfig* out) {
  const YamlNode* nc = r.Map(spec, "nodeConfig");
  if (!nc) return;
  const YamlDocument& d = r.doc();
  out->labels = r.Strings(nc, "labels");
  CheckLabels(r, r.Node(nc, "labels"), "spec.nodeConfig.labels");
  out->resource_labels = r.Strings(nc, "resourceLabels");
  CheckResourceLabels(r, r.Node(nc, "resourceLabels"), "spec.nodeConfig.resourceLabels");
  if (const YamlNode* taints = r.Node(nc, "taints"); taints && taints->type == YamlNode::Type::kSeq) {
    out->taints.emplace();
    for (size_t i = 0; i < taints->count; ++i) {
      const YamlNode& t = d.item(*taints, i);
      std::string f = IndexPath("spec.nodeConfig.taints", i);
      Taint taint{r.Str(&t, "key").value_or(""), r.Str(&t, "value").value_or(""), r.Str(&t, "effect").value_or("")};
      if (const YamlNode* k = r.Node(&t, "key"); k && !r.Bad(f + ".key"))
        if (std::string why = CheckLabelKey(taint.key); !why.empty())
          r.ErrorAt(*k, f + ".key", "invalid taint key \"" + taint.key + "\": " + why);
      if (const YamlNode* v = r.Node(&t, "value"); v && !r.Bad(f + ".value"))
        if (std::string why = CheckLabelValue(taint.value); !why.empty())
          r.ErrorAt(*v, f + ".value", "invalid taint value \"" + taint.value + "\": " + why);
      out->taints->push_back(std::move(taint));
    }
  }
  out->service_account = r.Str(nc, "serviceAccount");
  out->oauth_scopes = r.List(nc, "oauthScopes");
  out->disk_size_gb = r.Int(nc, "diskSizeGb");
  out->disk_type = r.Str(nc, "diskType");
  out->image_type = r.Str(nc, "imageType");
  out->tags = r.List(nc, "tags");
  out->metadata = r.Strings(nc, "metadata");
}

void DecodeCounts(DocReader& r, const YamlNode* spec, const std::optional<catalog::Shape>& shape,
                  TPUNodePool* out) {
  auto node_count = r.Int(spec, "nodeCount");
  const YamlNode* as = r.Map(spec, "autoscaling");
  if (as) {
    Autoscaling a;
    a.enabled = r.Bool(as, "enabled").value_or(true);
    a.min_node_count = r.Int(as, "minNodeCount").value_or(0);
    a.max_node_count = r.Int(as, "maxNodeCount").value_or(0);
    if (a.min_node_count > a.max_node_count && !r.Bad("spec.autoscaling.maxNodeCount"))
      r.Error(as, "minNodeCount", "spec.autoscaling.minNodeCount",
              "expected at most maxNodeCount (" + std::to_string(a.max_node_count) + "), got " +
                  std::to_string(a.min_node_count));
    out->autoscaling = a;
  }
  if (!shape) return;
  out->node_count = shape->vms;
  const std::string slice = "a " + shape->topology + " slice of " + shape->machine_type.name + " has " +
                            Plural(shape->vms, "VM");
  if (shape->multi_host) {
    if (node_count && *node_count != shape->vms)
      r.Error(spec, "nodeCount", "spec.nodeCount",
              "nodeCount " + std::to_string(*node_count) + " contradicts topology " + shape->topology + ": " +
                  slice + ", and a multi-host pool's size is fixed (leave nodeCount out)");
    if (as)
      r.Error(spec, "autoscaling", "spec.autoscaling",
              "autoscaling is only for single-host pools: " + slice + " (multi-host, created and deleted whole)");
  } else if (node_count) {
    out->node_count = *node_count;
    out->node_count_set = true;
  }
}

void CheckWorkloadPolicy(DocReader& r, const YamlNode* spec, const std::optional<catalog::Shape>& shape,
                         TPUNodePool* out) {
  out->workload_policy = r.Str(spec, "workloadPolicy").value_or("");
  if (!shape) return;
  bool wants = shape->placement == catalog::Placement::kWorkloadPolicy;
  if (wants && out->workload_policy.empty() && !r.Bad("spec.workloadPolicy"))
    r.Error(spec, "topology", "spec.workloadPolicy",
            "required field is missing (a multi-host " + shape->generation->accelerator + " slice (" +
                shape->topology + ") is placed by a Compute workload policy; name it here, it is created if absent)");
  if (!wants && r.Node(spec, "workloadPolicy"))
    r.Error(spec, "workloadPolicy", "spec.workloadPolicy",
            "only valid for multi-host tpu7x pools (this is a " + std::string(shape->multi_host ? "multi" : "single") +
                "-host " + shape->generation->accelerator + " pool)");
}

}  // namespace

void DecodePool(DocReader& r, TPUNodePool* out) {
  const YamlNode* spec = r.Map(&r.doc().root(), "spec");
  if (!spec) return;
  std::optional<catalog::Shape> shape = ResolvePoolShape(r, spec);
  if (shape) {
    out->shape = *shape;
    out->accelerator = shape->generation->accelerator;
  }
  out->slices = r.Int(spec, "slices").value_or(1);
  out->location = r.Str(spec, "location").value_or("");
  DecodeCapacity(r, spec, &out->capacity);
  DecodeCounts(r, spec, shape, out);
  CheckWorkloadPolicy(r, spec, shape, out);
  DecodeNodeConfig(r, spec, &out->node_config);
  if (const YamlNode* m = r.Map(spec, "management")) {
    out->management.auto_repair = r.Bool(m, "autoRepair").value_or(true);
    out->management.auto_upgrade = r.Bool(m, "autoUpgrade").value_or(false);
  }
  out->version = r.Str(spec, "version");

  // GKE names the pools <name>-<index>; the longest must fit GKE's limit.
  const YamlNode* metadata = r.Map(&r.doc().root(), "metadata");
  if (!out->name.empty() && !r.Bad("metadata.name") && !r.Bad("spec.slices")) {
    std::string longest = out->PoolName(out->slices - 1);
    if (std::string why = CheckRfc1035(longest, kMaxNodePoolName); !why.empty())
      r.Error(metadata, "name", "metadata.name",
              "node pool name \"" + longest + "\" (name-<slice index>) " + why + " (GKE's limit)");
  }
}

}  // namespace tpu::manifest
