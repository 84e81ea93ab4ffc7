// DecodeDemand: a Cluster's spec.demand → DemandPolicy (docs/architecture.md, "Beside Kueue"), with the
// checks the schema cannot make: accelerators the catalog knows (aliases become
// GKE labels), topologies valid for at least one allowed accelerator, the
// grace period as seconds.
#include <algorithm>

#include "catalog/catalog.h"
#include "manifest/decode_util.h"

namespace tpu::manifest {
namespace {

// "1h30m", "90s", "5m" → seconds; nullopt when malformed (the schema's pattern
// already reported it).
std::optional<int> ParseSeconds(const std::string& s) {
  if (s.empty()) return std::nullopt;
  int total = 0, n = 0;
  bool digits = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      n = n * 10 + (c - '0');
      digits = true;
      if (n > 1'000'000) return std::nullopt;
    } else if (digits && (c == 'h' || c == 'm' || c == 's')) {
      total += n * (c == 'h' ? 3600 : c == 'm' ? 60 : 1);
      n = 0;
      digits = false;
    } else {
      return std::nullopt;
    }
  }
  if (digits) return std::nullopt;
  return total;
}

std::optional<CapacityType> CapacityTypeNamed(const std::string& s) {
  if (s == "onDemand") return CapacityType::kOnDemand;
  if (s == "spot") return CapacityType::kSpot;
  if (s == "reservation") return CapacityType::kReservation;
  return std::nullopt;
}

}  // namespace

std::optional<int> ParseDurationSeconds(const std::string& s) { return ParseSeconds(s); }

void DecodeDemand(DocReader& r, const YamlNode* d, DemandPolicy* out) {
  out->enabled = r.Bool(d, "enabled").value_or(true);
  const YamlNode* accs = r.Node(d, "accelerators");
  if (accs && accs->type == YamlNode::Type::kSeq && !r.Bad("spec.demand.accelerators")) {
    for (size_t i = 0; i < accs->count; ++i) {
      const YamlNode& v = r.doc().item(*accs, i);
      const catalog::Generation* gen = catalog::FindGeneration(v.text);
      if (!gen) {
        r.ErrorAt(v, "spec.demand.accelerators[" + std::to_string(i) + "]",
                  catalog::ResolveShape(v.text, "").status().message());
        continue;
      }
      out->accelerators.push_back(gen->accelerator);
    }
  }
  const YamlNode* topos = r.Node(d, "topologies");
  if (topos && topos->type == YamlNode::Type::kSeq && !r.Bad("spec.demand.topologies")) {
    for (size_t i = 0; i < topos->count; ++i) {
      const YamlNode& v = r.doc().item(*topos, i);
      bool valid = out->accelerators.empty() ||
                   std::any_of(out->accelerators.begin(), out->accelerators.end(),
                               [&](const std::string& a) { return catalog::ResolveShape(a, v.text).ok(); });
      if (!valid) {
        r.ErrorAt(v, "spec.demand.topologies[" + std::to_string(i) + "]",
                  "topology " + v.text + " is not valid for any of the allowed accelerators");
        continue;
      }
      out->topologies.push_back(v.text);
    }
  }
  if (auto caps = r.List(d, "capacityTypes")) {
    out->capacity_types.clear();
    for (const auto& c : *caps)
      if (auto t = CapacityTypeNamed(c)) out->capacity_types.push_back(*t);
  }
  out->max_chips = r.Int(d, "maxChips").value_or(0);
  out->max_chips_per_namespace = r.Int(d, "maxChipsPerNamespace");
  if (auto g = r.Str(d, "gracePeriod"); g && !r.Bad("spec.demand.gracePeriod")) {
    if (auto secs = ParseSeconds(*g)) out->grace_period_seconds = *secs;
    else r.Error(d, "gracePeriod", "spec.demand.gracePeriod", "expected a duration such as 10m or 1h30m, got " + *g);
  }
  out->zone = r.Str(d, "zone").value_or("");
  out->service_account = r.Str(d, "serviceAccount").value_or("");
  if (auto labels = r.Strings(d, "nodeLabels")) out->node_labels = *labels;
  CheckLabels(r, r.Node(d, "nodeLabels"), "spec.demand.nodeLabels");
  if (auto v = r.List(d, "allowedServiceAccounts")) out->allowed_service_accounts = *v;
  const YamlNode* nets = r.Node(d, "additionalNodeNetworks");
  if (nets && nets->type == YamlNode::Type::kSeq && !r.Bad("spec.demand.additionalNodeNetworks")) {
    for (size_t i = 0; i < nets->count; ++i) {
      const YamlNode& n = r.doc().item(*nets, i);
      out->additional_node_networks.emplace_back(r.Str(&n, "network").value_or(""),
                                                 r.Str(&n, "subnetwork").value_or(""));
    }
  }
  if (auto v = r.List(d, "tags")) out->tags = *v;
  out->max_pods_per_node = r.Int(d, "maxPodsPerNode").value_or(out->max_pods_per_node);
  if (out->max_pods_per_node > 0 && out->max_pods_per_node < 8)  // GKE's range is 8 to 256
    r.Error(d, "maxPodsPerNode", "spec.demand.maxPodsPerNode",
            "expected 0 (GKE's default) or 8 to 256, got " + std::to_string(out->max_pods_per_node));
  out->secure_boot = r.Bool(d, "secureBoot").value_or(true);
  out->secondary_boot_disk = r.Str(d, "secondaryBootDisk").value_or("");
  out->disk_type = r.Str(d, "diskType").value_or("");
  out->boot_disk_kms_key = r.Str(d, "bootDiskKmsKey").value_or("");
  if (auto v = r.List(d, "podLabelsToNodes")) out->pod_labels_to_nodes = *v;
  out->tpu_resource = r.Str(d, "tpuResource").value_or(out->tpu_resource);
}

}  // namespace tpu::manifest
