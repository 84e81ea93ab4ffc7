// DecodePool: a TPUNodePool document's spec → TPUNodePool, with the catalog's
// shape and the rules the schema cannot say: topology for the accelerator,
// node counts and autoscaling of multi-host slices (0 ↔ their VMs),
// flex-start's sizing and contradictions, generated pool names, capacity and
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

// One capacity type: spec.capacity, or one rung of a ladder (`field` names
// it); a missing reservation name is reported at `at`.
void DecodeRung(DocReader& r, const YamlNode* cap, const YamlNode& at, const std::string& field, Capacity* out) {
  std::string type = r.Str(cap, "type").value_or("onDemand");
  if (type == "spot") out->type = CapacityType::kSpot;
  else if (type == "reservation") out->type = CapacityType::kReservation;
  else if (type == "flexStart") out->type = CapacityType::kFlexStart;
  out->reservation = r.Str(cap, "reservation").value_or("");
  out->reservation_project = r.Str(cap, "reservationProject").value_or("");
  if (r.Bad(field + ".type")) return;
  if (out->type == CapacityType::kReservation && out->reservation.empty() && !r.Bad(field + ".reservation"))
    r.ErrorAt(at, field + ".reservation",
              "required field is missing (capacity type reservation needs the reservation's name)");
  if (out->type != CapacityType::kReservation) {
    for (const char* key : {"reservation", "reservationProject"})
      if (r.Node(cap, key))
        r.Error(cap, key, field + "." + key, "only valid with capacity type reservation (got type " + type + ")");
  }
}

// A ladder's rungs, best first. Every rung but the last must be able to stock
// out, since only a stockout moves a slice down; flex-start is queued by the
// Dynamic Workload Scheduler instead, sized by the autoscaler and admitted
// through Kueue's ProvisioningRequest check, so it is its own TPUNodePool.
void DecodeLadder(DocReader& r, const YamlNode* list, TPUNodePool* out) {
  const YamlDocument& d = r.doc();
  for (size_t i = 0; i < d.size(*list); ++i) {
    const YamlNode& item = d.item(*list, i);
    if (item.type != YamlNode::Type::kMap) return;  // the schema reported it
    const std::string field = "spec.capacity[" + std::to_string(i) + "]";
    Capacity rung;
    DecodeRung(r, &item, item, field, &rung);
    if (rung.type == CapacityType::kFlexStart && d.size(*list) > 1 && !r.Bad(field + ".type")) {
      r.Error(&item, "type", field + ".type",
              "flexStart cannot be a rung of a capacity ladder: a flex-start pool waits in the Dynamic Workload "
              "Scheduler's queue instead of stocking out, so no rung after it is ever reached; declare it as a "
              "TPUNodePool of its own");
      continue;
    }
    for (size_t j = 0; j < out->ladder.size(); ++j)
      if (out->ladder[j] == rung)
        r.Error(&item, "type", field, "repeats spec.capacity[" + std::to_string(j) + "] (" + CapacityName(rung) +
                                          "): each rung of a ladder is a different capacity");
    out->ladder.push_back(std::move(rung));
  }
  if (out->ladder.empty()) return;
  out->capacity = out->ladder.front();
  if (out->ladder.size() == 1) out->ladder.clear();  // one rung is a plain capacity type
}

void DecodeCapacity(DocReader& r, const YamlNode* spec, TPUNodePool* out) {
  const YamlNode* cap = r.Node(spec, "capacity");
  if (!cap) return;
  if (cap->type == YamlNode::Type::kSeq) return DecodeLadder(r, cap, out);
  if (cap->type == YamlNode::Type::kMap)
    DecodeRung(r, cap, *r.doc().FindKey(*spec, "capacity"), "spec.capacity", &out->capacity);
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

// A multi-host slice autoscales only as a whole: between 0 and its VMs.
void SliceAutoscaling(DocReader& r, const YamlNode* as, const catalog::Shape& shape,
                      const std::string& slice, TPUNodePool* out) {
  const std::string whole = slice + ", and a multi-host slice autoscales as a whole between 0 and its VM count";
  if (auto min = r.Int(as, "minNodeCount"); min && *min != 0 && !r.Bad("spec.autoscaling.minNodeCount"))
    r.Error(as, "minNodeCount", "spec.autoscaling.minNodeCount",
            "expected 0, got " + std::to_string(*min) + ": " + whole);
  if (auto max = r.Int(as, "maxNodeCount"); max && *max != shape.vms && !r.Bad("spec.autoscaling.maxNodeCount"))
    r.Error(as, "maxNodeCount", "spec.autoscaling.maxNodeCount",
            "expected " + std::to_string(shape.vms) + ", got " + std::to_string(*max) + ": " + whole +
                " (leave maxNodeCount out, or write " + std::to_string(shape.vms) + ")");
  out->autoscaling->min_node_count = 0;
  out->autoscaling->max_node_count = shape.vms;
}

// Flex-start pools are provisioned by the Dynamic Workload Scheduler when the
// autoscaler asks: they scale from 0 and have no fixed size (xpk's and
// Cluster Toolkit's flex-start node pools).
void FlexStartSize(DocReader& r, const YamlNode* spec, const catalog::Shape& shape, TPUNodePool* out) {
  const std::string why = "a flex-start pool scales from 0: the Dynamic Workload Scheduler provisions its nodes "
                          "when the autoscaler asks for them";
  if (r.Node(spec, "nodeCount") && !r.Bad("spec.nodeCount"))
    r.Error(spec, "nodeCount", "spec.nodeCount",
            "not valid with capacity type flexStart (" + why +
                (shape.multi_host ? "); leave nodeCount out" : "); set autoscaling.maxNodeCount instead"));
  const YamlNode* as = r.Map(spec, "autoscaling");
  if (as && !r.Bool(as, "enabled").value_or(true) && !r.Bad("spec.autoscaling.enabled"))
    r.Error(as, "enabled", "spec.autoscaling.enabled", "expected true with capacity type flexStart (" + why + ")");
  if (as && r.Int(as, "minNodeCount").value_or(0) != 0 && !r.Bad("spec.autoscaling.minNodeCount"))
    r.Error(as, "minNodeCount", "spec.autoscaling.minNodeCount",
            "expected 0 with capacity type flexStart, got " + std::to_string(*r.Int(as, "minNodeCount")) +
                " (" + why + ")");
  int max = shape.vms;
  if (!shape.multi_host) {
    auto m = as ? r.Int(as, "maxNodeCount") : std::nullopt;
    if (!m && !r.Bad("spec.autoscaling.maxNodeCount") && !r.Bad("spec.autoscaling"))
      r.Error(as ? as : spec, as ? "maxNodeCount" : "capacity", "spec.autoscaling.maxNodeCount",
              "required field is missing (a single-host flex-start pool scales from 0 up to "
              "autoscaling.maxNodeCount)");
    max = m.value_or(1);
  }
  out->autoscaling = Autoscaling{true, 0, max};
  out->node_count = max;
}

void DecodeCounts(DocReader& r, const YamlNode* spec, const std::optional<catalog::Shape>& shape,
                  TPUNodePool* out) {
  auto node_count = r.Int(spec, "nodeCount");
  const YamlNode* as = r.Map(spec, "autoscaling");
  std::optional<int> max;
  if (as) {
    Autoscaling a;
    a.enabled = r.Bool(as, "enabled").value_or(true);
    a.min_node_count = r.Int(as, "minNodeCount").value_or(0);
    max = r.Int(as, "maxNodeCount");
    a.max_node_count = max.value_or(0);
    if (max && a.min_node_count > a.max_node_count && !r.Bad("spec.autoscaling.maxNodeCount"))
      r.Error(as, "minNodeCount", "spec.autoscaling.minNodeCount",
              "expected at most maxNodeCount (" + std::to_string(a.max_node_count) + "), got " +
                  std::to_string(a.min_node_count));
    out->autoscaling = a;
  }
  if (!shape) return;
  out->node_count = shape->vms;
  if (out->capacity.type == CapacityType::kFlexStart) return FlexStartSize(r, spec, *shape, out);
  const std::string slice = "a " + shape->topology + " slice of " + shape->machine_type.name + " has " +
                            Plural(shape->vms, "VM");
  if (shape->multi_host) {
    if (node_count && *node_count != shape->vms)
      r.Error(spec, "nodeCount", "spec.nodeCount",
              "nodeCount " + std::to_string(*node_count) + " contradicts topology " + shape->topology + ": " +
                  slice + ", and a multi-host pool's size is fixed (leave nodeCount out)");
    out->node_count_set = node_count.has_value();
    if (out->autoscaled()) SliceAutoscaling(r, as, *shape, slice, out);
  } else {
    if (node_count) {
      out->node_count = *node_count;
      out->node_count_set = true;
    }
    if (out->autoscaled() && !max && !r.Bad("spec.autoscaling"))
      r.Error(spec, "autoscaling", "spec.autoscaling.maxNodeCount",
              "required field is missing (a single-host pool autoscales between minNodeCount and maxNodeCount)");
  }
}

// Contradictions of flex-start with the rest of the spec (spot and
// reservations cannot be written with it: capacity has one type).
void CheckFlexStart(DocReader& r, const YamlNode* spec, TPUNodePool* out) {
  if (out->capacity.type != CapacityType::kFlexStart) return;
  const YamlNode* m = r.Map(spec, "management");
  if (m && r.Bool(m, "autoRepair").value_or(false) && !r.Bad("spec.management.autoRepair"))
    r.Error(m, "autoRepair", "spec.management.autoRepair",
            "expected false with capacity type flexStart (GKE's flex-start node pools run without "
            "auto-repair; leave autoRepair out and it is turned off)");
}

void DecodeManagement(DocReader& r, const YamlNode* spec, TPUNodePool* out) {
  const YamlNode* m = r.Map(spec, "management");
  if (!m) return;
  Management mg;
  mg.auto_repair = r.Bool(m, "autoRepair");
  mg.auto_upgrade = r.Bool(m, "autoUpgrade");
  if (const YamlNode* k = r.doc().FindKey(*m, "autoUpgrade")) mg.auto_upgrade_at = {"", k->line, k->column};
  out->management = mg;
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
  DecodeCapacity(r, spec, out);
  DecodeCounts(r, spec, shape, out);
  CheckWorkloadPolicy(r, spec, shape, out);
  DecodeNodeConfig(r, spec, &out->node_config);
  DecodeManagement(r, spec, out);
  CheckFlexStart(r, spec, out);
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
