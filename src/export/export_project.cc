// Live state → manifests (see export_project.h).
#include "export/export_project.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include <yaml-cpp/yaml.h>

#include "catalog/catalog.h"
#include "export/pool_spec.h"
#include "export/yaml_emit.h"
#include "manifest/types.h"
#include "plan/capacity_shape.h"
#include "plan/desired.h"
#include "plan/normalize.h"
#include "plan/ownership.h"

namespace tpu::exporter {
namespace {
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

// A TPUNodeGroup's instanceConfig read back from its template; the bootstrap
// keys of the metadata become bootstrapKubernetes.
manifest::TPUNodeGroup::InstanceConfig InstanceConfigOf(
    const cloud::InstanceTemplate& it, std::optional<manifest::TPUNodeGroup::BootstrapKubernetes>* boot) {
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
  auto v = ic.metadata.find("kubernetes-version");
  auto ip = ic.metadata.find("kubernetes-control-plane-ip");
  if (v != ic.metadata.end() && ip != ic.metadata.end()) {
    *boot = manifest::TPUNodeGroup::BootstrapKubernetes{v->second, ip->second};
    for (const char* key : plan::kBootstrapMetadataKeys) ic.metadata.erase(key);
  }
  return ic;
}

// spec.instanceConfig: what differs from the defaults.
YAML::Node InstanceConfigNode(const manifest::TPUNodeGroup::InstanceConfig& ic, const std::string& provisioning_model) {
  YAML::Node n;
  n["machineType"] = ic.machine_type;
  if (!provisioning_model.empty() && provisioning_model != "STANDARD") n["provisioningModel"] = provisioning_model;
  if (!ic.reservation.empty()) n["reservation"] = ic.reservation;
  if (!ic.image.empty()) n["image"] = ic.image;
  if (!ic.subnetwork.empty()) n["subnetwork"] = ic.subnetwork;
  if (ic.boot_disk_size_gb) n["bootDiskSizeGB"] = *ic.boot_disk_size_gb;
  if (ic.disk_type) n["diskType"] = *ic.disk_type;
  if (!ic.service_accounts.empty()) n["serviceAccounts"] = ListNode(ic.service_accounts);
  if (!ic.network_tags.empty()) n["networkTags"] = ListNode(ic.network_tags);
  if (!ic.metadata.empty()) n["metadata"] = StringMapNode(ic.metadata);
  return n;
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
    std::optional<manifest::TPUNodeGroup::BootstrapKubernetes> boot;
    const manifest::TPUNodeGroup::InstanceConfig ic = InstanceConfigOf(it, &boot);
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
      s["instanceConfig"] = InstanceConfigNode(ic, it.provisioning_model);
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
