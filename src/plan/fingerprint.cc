// Live-state fingerprints: FNV-1a over a canonical JSON of what the diff reads.
#include "plan/fingerprint.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "plan/resource_json.h"

namespace tpu::plan {
namespace {

using nlohmann::json;

// Sorted by `key` so list order never changes the fingerprint.
template <typename T, typename F, typename K>
json SortedArray(const std::vector<T>& items, F to_json, K key) {
  std::vector<const T*> sorted;
  for (const auto& x : items) sorted.push_back(&x);
  std::sort(sorted.begin(), sorted.end(), [&](const T* a, const T* b) { return key(*a) < key(*b); });
  json out = json::array();
  for (const T* x : sorted) out.push_back(to_json(*x));
  return out;
}

json PoolForFingerprint(const cloud::NodePool& p) {
  cloud::NodePool q = p;
  q.status_message.clear();
  q.instance_group_urls.clear();
  // An autoscaled pool's size moves on its own and is never diffed.
  if (q.autoscaling && q.autoscaling->enabled) q.node_count = 0;
  return NodePoolToJson(q);
}

}  // namespace

std::string Fnv1aHex(std::string_view data) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string Fingerprint(const cloud::ProjectState& project) {
  json j;
  j["clusters"] = SortedArray(
      project.clusters,
      [](const cloud::Cluster& c) {
        return json{{"name", c.name},
                    {"location", c.location},
                    {"nodePools", SortedArray(c.node_pools, PoolForFingerprint,
                                              [](const cloud::NodePool& p) { return p.name; })}};
      },
      [](const cloud::Cluster& c) { return c.location + "/" + c.name; });
  j["workloadPolicies"] = SortedArray(project.workload_policies, WorkloadPolicyToJson,
                                      [](const auto& p) { return p.region + "/" + p.name; });
  j["instanceTemplates"] = SortedArray(project.instance_templates, InstanceTemplateToJson,
                                       [](const auto& t) { return t.name; });
  j["instanceGroupManagers"] = SortedArray(project.instance_group_managers, InstanceGroupManagerToJson,
                                           [](const auto& g) { return g.zone + "/" + g.name; });
  return Fnv1aHex(j.dump());
}

Status CheckLiveUnchanged(const Plan& plan, const cloud::LiveState& live) {
  std::string moved;
  for (const auto& [project, fp] : plan.live_fingerprints) {
    auto it = live.projects.find(project);
    std::string now = Fingerprint(it == live.projects.end() ? cloud::ProjectState() : it->second);
    if (now != fp) moved += (moved.empty() ? "" : ", ") + project;
  }
  if (moved.empty()) return Status::OK();
  return Status::FailedPrecondition("live state changed since the plan was made (project " + moved +
                                    "); run plan again");
}

}  // namespace tpu::plan
