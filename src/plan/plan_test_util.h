// Builders for plan tests: manifest targets written in C++ (no YAML), and the
// live node pool GKE would report for a desired one, with its server defaults
// and spellings, so diff tests start from "in sync".
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "catalog/catalog.h"
#include "cloud/types.h"
#include "manifest/types.h"
#include "plan/desired.h"
#include "plan/model.h"

namespace tpu::plan::testing {

inline manifest::TPUNodePool MakePool(const std::string& name, const std::string& accelerator,
                                      const std::string& topology, int slices = 1,
                                      const std::string& zone = "us-central2-b") {
  manifest::TPUNodePool p;
  p.name = name;
  p.where = {"deploy/p/c/pools.yaml", 1, 1};
  auto shape = catalog::ResolveShape(accelerator, topology);
  EXPECT_TRUE(shape.ok()) << shape.status().ToString();
  p.shape = *shape;
  p.accelerator = shape->generation->accelerator;
  p.slices = slices;
  p.location = zone;
  p.node_count = shape->vms;
  if (p.shape.placement == catalog::Placement::kWorkloadPolicy) p.workload_policy = name + "-wp";
  return p;
}

inline manifest::Target MakeTarget(const std::string& project = "p", const std::string& cluster = "c") {
  manifest::Target t;
  t.project = project;
  t.cluster = cluster;
  t.dir = "deploy/" + project + "/" + cluster;
  return t;
}

// What GKE reports for a pool created from `desired`: defaults filled in,
// other spellings, extra system labels and taints, tpu7x placement without type.
inline cloud::NodePool AsReported(cloud::NodePool p) {
  if (!p.disk_type) p.disk_type = "pd-balanced";
  if (!p.disk_size_gb) p.disk_size_gb = 100;
  if (!p.image_type) p.image_type = "COS_CONTAINERD";
  else p.image_type = "cos_containerd" == *p.image_type ? "COS_CONTAINERD" : *p.image_type;
  if (!p.service_account) p.service_account = "default";
  if (!p.oauth_scopes) {
    p.oauth_scopes = std::vector<std::string>{"https://www.googleapis.com/auth/devstorage.read_only"};
  } else {
    for (auto& s : *p.oauth_scopes) s = "https://www.googleapis.com/auth/" + s;
    std::reverse(p.oauth_scopes->begin(), p.oauth_scopes->end());
  }
  cloud::StringMap md = p.metadata.value_or(cloud::StringMap{});
  md["disable-legacy-endpoints"] = "true";
  p.metadata = md;
  (*p.resource_labels)["goog-gke-node-pool-provisioning-model"] = p.spot ? "spot" : "on-demand";
  cloud::StringMap labels = p.labels.value_or(cloud::StringMap{});
  labels["cloud.google.com/gke-nodepool"] = p.name;
  p.labels = labels;
  if (p.taints) std::reverse(p.taints->begin(), p.taints->end());
  if (p.spot) {
    auto taints = p.taints.value_or(std::vector<cloud::NodeTaint>{});
    taints.push_back({"cloud.google.com/gke-spot", "true", "NO_SCHEDULE"});
    p.taints = taints;
  }
  if (p.placement_policy && !p.placement_policy->policy_name.empty()) {
    // tpu7x: GKE reports the policy's full path and topology, and no type.
    p.placement_policy->policy_name = "projects/p/regions/us-central2/resourcePolicies/" +
                                      p.placement_policy->policy_name;
    p.placement_policy->tpu_topology = "4x4x4";
  }
  if (!p.reservation_affinity) p.reservation_affinity = cloud::ReservationAffinity{"NO_RESERVATION", "", {}};
  if (!p.version) p.version = "1.30.5-gke.1014001";
  else p.version = *p.version + ".5-gke.1014001";
  if (!p.autoscaling) p.autoscaling = cloud::NodePoolAutoscaling{false, 0, 0, ""};
  if (!p.management) p.management = cloud::NodeManagement{true, true};  // GKE's defaults
  p.status = "RUNNING";
  p.self_link = "https://container.googleapis.com/v1/projects/p/locations/us-central2/clusters/c/nodePools/" + p.name;
  return p;
}

inline cloud::Cluster MakeCluster(const std::string& project = "p", const std::string& name = "c",
                                  const std::string& location = "us-central2") {
  cloud::Cluster c;
  c.project = project;
  c.name = name;
  c.location = location;
  c.status = "RUNNING";
  return c;
}

// Live state in which every pool `target` declares exists as GKE reports it.
inline cloud::LiveState InSync(const manifest::Target& target) {
  cloud::LiveState live;
  cloud::ProjectState& ps = live.projects[target.project];
  ps.project = target.project;
  cloud::Cluster c = MakeCluster(target.project, target.cluster);
  DesiredTarget d = BuildDesired(target);
  for (const auto& dp : d.pools) c.node_pools.push_back(AsReported(dp.pool));
  ps.clusters.push_back(c);
  for (const auto& p : d.policies) {
    cloud::WorkloadPolicy w = p.resource;
    w.status = "READY";
    ps.workload_policies.push_back(w);
  }
  for (const auto& t : d.templates) ps.instance_templates.push_back(t.resource);
  for (const auto& g : d.groups) {
    cloud::InstanceGroupManager m = g.resource;
    m.instance_template = "https://www.googleapis.com/compute/v1/" + m.instance_template;
    m.status = "STABLE";
    ps.instance_group_managers.push_back(m);
  }
  return live;
}

inline manifest::Repo RepoOf(std::vector<manifest::Target> targets) {
  manifest::Repo r;
  r.targets = std::move(targets);
  return r;
}

// "kind name" of every action, in plan order, noops left out.
inline std::vector<std::string> Steps(const TargetPlan& t) {
  std::vector<std::string> out;
  for (const auto& a : t.actions)
    if (a.kind != ActionKind::kNoop) out.push_back(std::string(ActionKindName(a.kind)) + " " + a.resource.name);
  return out;
}

inline const Action* Find(const TargetPlan& t, const std::string& name) {
  for (const auto& a : t.actions)
    if (a.resource.name == name) return &a;
  return nullptr;
}

// The first cluster of `project` in `live`.
inline cloud::Cluster& ClusterOf(cloud::LiveState& live, const std::string& project = "p") {
  return live.projects[project].clusters.at(0);
}

}  // namespace tpu::plan::testing
