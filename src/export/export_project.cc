// Live state → manifests (see export_project.h).
#include "export/export_project.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include <yaml-cpp/yaml.h>

#include "catalog/catalog.h"
#include "manifest/types.h"
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

// "v6e-0" → {"v6e", 0}; nullopt when the name has no -<index> suffix (or a
// zero-padded one, which `<name>-<i>` never makes).
std::optional<std::pair<std::string, int>> SplitSlice(const std::string& name) {
  size_t dash = name.rfind('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == name.size()) return std::nullopt;
  std::string digits = name.substr(dash + 1);
  if (digits.size() > 4 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  return std::make_pair(name.substr(0, dash), std::stoi(digits));
}

std::string KubeEffect(const std::string& gke) {
  if (gke == "NO_SCHEDULE") return "NoSchedule";
  if (gke == "PREFER_NO_SCHEDULE") return "PreferNoSchedule";
  if (gke == "NO_EXECUTE") return "NoExecute";
  return gke;
}

YAML::Node StringMapNode(const cloud::StringMap& m) {
  YAML::Node n(YAML::NodeType::Map);
  for (const auto& [k, v] : m) n[k] = v;
  return n;
}

YAML::Node ListNode(const std::vector<std::string>& v) {
  YAML::Node n(YAML::NodeType::Sequence);
  for (const auto& s : v) n.push_back(s);
  n.SetStyle(YAML::EmitterStyle::Flow);
  return n;
}

// Fields that are numbers or booleans in the schemas; every other scalar is a string.
bool IsNumberField(const std::string& key) {
  static const std::set<std::string> kNumbers = {"nodeCount", "slices", "minNodeCount", "maxNodeCount",
                                                 "diskSizeGb", "bootDiskSizeGB", "autoRepair", "autoUpgrade",
                                                 "enabled"};
  return kNumbers.count(key) > 0;
}

// A string YAML would read as something else (a bool, a null, a number).
bool NeedsQuotes(const std::string& s) {
  static const std::set<std::string> kWords = {"true", "false", "yes", "no", "on", "off", "y", "n", "null", "~",
                                               "True", "False", "Yes", "No", "On", "Off", "TRUE", "FALSE",
                                               "YES", "NO", "ON", "OFF", "Null", "NULL", "Y", "N"};
  if (s.empty() || kWords.count(s)) return true;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  bool digits = i < s.size();
  for (; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i])) && s[i] != '.' && s[i] != 'e' && s[i] != 'E' && s[i] != '_')
      digits = false;
  return digits;
}

void EmitNode(YAML::Emitter& e, const YAML::Node& n, const std::string& key) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      e << YAML::BeginMap;
      for (auto it = n.begin(); it != n.end(); ++it) {
        std::string k = it->first.as<std::string>();
        e << YAML::Key << k << YAML::Value;
        EmitNode(e, it->second, k);
      }
      e << YAML::EndMap;
      break;
    case YAML::NodeType::Sequence:
      e << (n.Style() == YAML::EmitterStyle::Flow ? YAML::Flow : YAML::Block) << YAML::BeginSeq;
      for (const auto& item : n) EmitNode(e, item, "");
      e << YAML::EndSeq;
      break;
    default: {
      const std::string& v = n.Scalar();
      if (!IsNumberField(key) && (NeedsQuotes(v) || key == "version")) e << YAML::DoubleQuoted << v;
      else e << v;
    }
  }
}

std::string Emit(const YAML::Node& doc) {
  YAML::Emitter e;
  EmitNode(e, doc, "");
  return std::string(e.c_str()) + "\n";
}

YAML::Node Header(const char* api_version, const char* kind, const std::string& name) {
  YAML::Node doc;
  doc["apiVersion"] = api_version;
  doc["kind"] = kind;
  doc["metadata"]["name"] = name;
  return doc;
}

void Annotate(YAML::Node& doc, const manifest::Annotations& a) {
  YAML::Node an(YAML::NodeType::Map);
  if (a.adopt) an["tpu-provisioner.io/adopt"] = "true";
  if (a.prevent_destroy) an["tpu-provisioner.io/prevent-destroy"] = "true";
  if (a.abandon) an["tpu-provisioner.io/deletion-policy"] = "abandon";
  if (an.size()) doc["metadata"]["annotations"] = an;
}

// One slice's spec as a manifest would say it, or why it cannot be said.
struct PoolSpec {
  YAML::Node spec;
  manifest::Annotations annotations;
  std::string text;  // the spec emitted: slices of one set must agree on it
  std::string why_not;
};

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
    std::string policy = plan::LastSegment(lp.placement_policy->policy_name);
    // The default name is "<name>-wp"; written only when it differs (checked by the caller).
    s["workloadPolicy"] = policy;
  }

  // Capacity.
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
    out.why_not = "it consumes any reservation (a TPUNodePool names one)";
    return out;
  }

  // Size.
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
  } else if (!multi && lp.node_count != resolved->vms) {
    s["nodeCount"] = lp.node_count;
  }

  // nodeConfig: what someone set, without what GKE adds or defaults.
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
  plan::Ownership own = plan::PoolOwnership(lp, target_key);
  const cloud::StringMap rl = lp.resource_labels.value_or(cloud::StringMap{});
  out.annotations.adopt = own != plan::Ownership::kOwned;
  out.annotations.prevent_destroy = own == plan::Ownership::kOwned && rl.count(plan::kPreventDestroyLabel);
  out.annotations.abandon = own == plan::Ownership::kOwned && rl.count(plan::kDeletionPolicyLabel);
  // A manifest that sets resourceLabels owns the whole set, markers included:
  // on a pool still to adopt that would be a change, so they wait for the adoption.
  if (own == plan::Ownership::kOwned) {
    cloud::StringMap mine;
    for (const auto& [k, v] : rl)
      if (!plan::IsSystemResourceLabel(k) && k != cloud::kManagedLabel && k != cloud::kTargetHashLabel &&
          k != plan::kPreventDestroyLabel && k != plan::kDeletionPolicyLabel)
        mine[k] = v;
    if (!mine.empty()) nc["resourceLabels"] = StringMapNode(mine);
  }
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

struct Exporter {
  const cloud::ProjectState& live;
  const ExportOptions& o;
  ExportResult result;
  std::map<std::string, std::string> files;           // path → text
  std::map<std::string, std::string> dir_locations;   // cluster dir → cluster.yaml location

  std::string Dir(const std::string& cluster) const { return "deploy/" + live.project + "/" + cluster; }

  void Add(const std::string& dir, const std::string& file, const YAML::Node& doc) {
    files[dir + "/" + file] = Emit(doc);
  }

  void Pools(const cloud::Cluster& c, const std::map<std::string, std::string>& policy_topologies) {
    const std::string key = live.project + "/" + c.name;
    std::map<std::string, std::map<int, const cloud::NodePool*>> sets;
    for (const auto& lp : c.node_pools) {
      if (catalog::ChipsPerVm(lp.machine_type) == 0) continue;  // not TPU
      if (plan::HasResourceLabel(lp, plan::kWorkloadOwnerLabel, plan::kWorkloadOwner)) {
        result.notes.push_back(key + ": node pool " + lp.name + " left out: demand-driven (owned by a workload)");
        continue;
      }
      if (plan::PoolOwnership(lp, key) == plan::Ownership::kForeign) {
        result.notes.push_back(key + ": node pool " + lp.name + " left out: tpu-provisioner manages it for another target");
        continue;
      }
      auto split = SplitSlice(lp.name);
      if (!split) {
        result.notes.push_back(key + ": node pool " + lp.name +
                               " left out: a TPUNodePool names its pools <name>-<index>, and this name has no index");
        continue;
      }
      sets[split->first][split->second] = &lp;
    }
    for (const auto& [base, slices] : sets) {
      std::vector<PoolSpec> specs;
      std::string why;
      int expect = 0;
      for (const auto& [index, lp] : slices) {
        if (index != expect++) {
          why = "its slices are not numbered 0 … " + std::to_string(slices.size() - 1);
          break;
        }
        specs.push_back(SpecOfPool(*lp, c, key, policy_topologies));
        if (!specs.back().why_not.empty()) {
          why = lp->name + ": " + specs.back().why_not;
          break;
        }
        if (specs.back().text != specs.front().text) {
          why = slices.begin()->second->name + " and " + lp->name + " differ in shape or settings";
          break;
        }
      }
      if (!why.empty()) {
        result.notes.push_back(key + ": node pools " + base + "-* left out: " + why);
        continue;
      }
      PoolSpec& first = specs.front();
      if (first.spec["workloadPolicy"] && first.spec["workloadPolicy"].as<std::string>() == base + "-wp")
        first.spec.remove("workloadPolicy");
      YAML::Node doc = Header("tpu-provisioner.io/v1alpha1", "TPUNodePool", base);
      Annotate(doc, first.annotations);
      YAML::Node spec;
      for (auto it = first.spec.begin(); it != first.spec.end(); ++it) {
        spec[it->first.as<std::string>()] = it->second;
        if (it->first.as<std::string>() == "topology" && slices.size() > 1)
          spec["slices"] = static_cast<int>(slices.size());
      }
      doc["spec"] = spec;
      Add(Dir(c.name), base + ".yaml", doc);
      dir_locations[c.name] = c.location;
      ++result.node_pool_manifests;
      result.node_pools += static_cast<int>(slices.size());
    }
  }

  void Groups() {
    std::map<std::string, const cloud::InstanceTemplate*> templates;
    for (const auto& t : live.instance_templates) templates[t.name] = &t;
    std::map<std::string, const cloud::WorkloadPolicy*> policies;
    for (const auto& p : live.workload_policies) policies[p.name] = &p;
    for (const auto& m : live.instance_group_managers) {
      auto t = templates.find(plan::LastSegment(m.instance_template));
      if (t == templates.end() || catalog::ChipsPerVm(t->second->machine_type) == 0) continue;
      auto marker = plan::ParseComputeDescription(m.description);
      std::string cluster;
      if (marker) {
        if (marker->target.rfind(live.project + "/", 0) != 0) continue;
        cluster = marker->target.substr(live.project.size() + 1);
      } else {
        cluster = o.cluster.empty() ? "gce-" + m.zone : o.cluster;
      }
      if (!o.cluster.empty() && cluster != o.cluster) continue;
      Group(m, *t->second, policies, cluster, marker.has_value());
    }
  }

  void Group(const cloud::InstanceGroupManager& m, const cloud::InstanceTemplate& it,
             const std::map<std::string, const cloud::WorkloadPolicy*>& policies, const std::string& cluster,
             bool owned) {
    const std::string key = live.project + "/" + cluster;
    const catalog::Generation* gen = catalog::GenerationOfMachineType(it.machine_type);
    std::string topology;
    if (!m.workload_policy.empty()) {
      auto p = policies.find(plan::LastSegment(m.workload_policy));
      if (p != policies.end()) topology = p->second->accelerator_topology;
    } else if (gen) {
      cloud::NodePool single;
      single.machine_type = it.machine_type;
      topology = plan::ShapeOfPool(single, {}).topology;
    }
    if (topology.empty()) {
      result.notes.push_back(key + ": managed instance group " + m.name + " left out: its TPU topology is unknown");
      return;
    }
    manifest::TPUNodeGroup g;
    g.name = m.name;
    g.project = live.project;
    g.node_location = m.zone;
    g.node_count = m.target_size;
    g.topology = topology;
    if (m.target_size_policy_mode == "BULK") g.target_size_policy_mode = manifest::TargetSizePolicyMode::kBulk;
    manifest::TPUNodeGroup::InstanceConfig ic;
    ic.machine_type = it.machine_type;
    if (it.provisioning_model == "SPOT") ic.provisioning_model = manifest::ProvisioningModel::kSpot;
    if (it.provisioning_model == "RESERVATION_BOUND")
      ic.provisioning_model = manifest::ProvisioningModel::kReservationBound;
    ic.reservation = it.reservation;
    ic.image = it.source_image;
    ic.subnetwork = it.subnetwork;
    ic.boot_disk_size_gb = it.boot_disk_size_gb;
    ic.disk_type = it.disk_type;
    ic.service_accounts = it.service_accounts;
    ic.network_tags = it.network_tags;
    ic.metadata = it.metadata;
    std::optional<manifest::TPUNodeGroup::BootstrapKubernetes> boot;
    auto v = ic.metadata.find("kubernetes-version");
    auto ip = ic.metadata.find("kubernetes-control-plane-ip");
    if (v != ic.metadata.end() && ip != ic.metadata.end()) {
      boot = manifest::TPUNodeGroup::BootstrapKubernetes{v->second, ip->second};
      ic.metadata.erase("kubernetes-version");
      ic.metadata.erase("kubernetes-control-plane-ip");
    }
    g.instance_config = ic;
    g.bootstrap_kubernetes = boot;
    g.annotations.adopt = !owned;

    // The template's name is a hash of its content: when what we can say
    // rebuilds that very name, say it; otherwise point at the template.
    manifest::Target probe;
    probe.project = live.project;
    probe.cluster = cluster;
    probe.groups = {g};
    plan::DesiredTarget d = plan::BuildDesired(probe);
    const bool same_template = !d.templates.empty() && d.templates[0].resource.name == it.name;

    YAML::Node doc = Header("tpu.google.com/v1alpha1", "TPUNodeGroup", m.name);
    Annotate(doc, g.annotations);
    YAML::Node s;
    s["project"] = live.project;
    s["nodeLocation"] = m.zone;
    s["nodeCount"] = m.target_size;
    s["topology"] = topology;
    if (g.target_size_policy_mode == manifest::TargetSizePolicyMode::kBulk) s["targetSizePolicyMode"] = "BULK";
    if (same_template) {
      YAML::Node n;
      n["machineType"] = ic.machine_type;
      if (!it.provisioning_model.empty() && it.provisioning_model != "STANDARD")
        n["provisioningModel"] = it.provisioning_model;
      if (!ic.reservation.empty()) n["reservation"] = ic.reservation;
      if (!ic.image.empty()) n["image"] = ic.image;
      if (!ic.subnetwork.empty()) n["subnetwork"] = ic.subnetwork;
      if (ic.boot_disk_size_gb) n["bootDiskSizeGB"] = *ic.boot_disk_size_gb;
      if (ic.disk_type) n["diskType"] = *ic.disk_type;
      if (!ic.service_accounts.empty()) n["serviceAccounts"] = ListNode(ic.service_accounts);
      if (!ic.network_tags.empty()) n["networkTags"] = ListNode(ic.network_tags);
      if (!ic.metadata.empty()) n["metadata"] = StringMapNode(ic.metadata);
      s["instanceConfig"] = n;
      if (boot) {
        s["bootstrapKubernetes"]["version"] = boot->version;
        s["bootstrapKubernetes"]["controlPlaneIP"] = boot->control_plane_ip;
      }
    } else {
      s["instanceTemplateURI"] = "projects/" + live.project + "/global/instanceTemplates/" + it.name;
    }
    doc["spec"] = s;
    Add(Dir(cluster), m.name + ".tpunodegroup.yaml", doc);
    if (!dir_locations.count(cluster)) dir_locations[cluster] = m.zone;
    ++result.node_groups;
  }

  void ClusterFiles() {
    for (const auto& [cluster, location] : dir_locations) {
      YAML::Node doc = Header("tpu-provisioner.io/v1alpha1", "Cluster", cluster);
      doc["spec"]["location"] = location;
      Add(Dir(cluster), "cluster.yaml", doc);
    }
  }
};

}  // namespace

ExportResult ExportProject(const cloud::ProjectState& live, const ExportOptions& options) {
  Exporter x{live, options, {}, {}, {}};
  std::map<std::string, std::string> policy_topologies;
  for (const auto& p : live.workload_policies) policy_topologies[p.name] = p.accelerator_topology;
  for (const auto& c : live.clusters)
    if (options.cluster.empty() || c.name == options.cluster) x.Pools(c, policy_topologies);
  x.Groups();
  x.ClusterFiles();
  for (auto& [path, text] : x.files) x.result.files.push_back({path, std::move(text)});
  return std::move(x.result);
}

}  // namespace tpu::exporter
