// GKE-made instance group managers (see gke_instance_groups.h).
#include "sim/gke_instance_groups.h"

#include <algorithm>

#include "sim/cloud_operations.h"

namespace tpu::sim {
namespace {

constexpr const char* kComputePrefix = "https://www.googleapis.com/compute/v1/";

// "https://…/compute/v1/projects/P/zones/Z/instanceGroupManagers/N" → "projects/P/zones/Z/instanceGroupManagers/N".
std::string KeyOf(const std::string& url) {
  auto at = url.find("projects/");
  return at == std::string::npos ? url : url.substr(at);
}

template <typename F>
void ForEachGroupKey(const PoolRecord& pool, F f) {
  for (const auto& url : pool.wire.value("instanceGroupUrls", json::array()))
    if (url.is_string()) f(KeyOf(url.get<std::string>()));
}

void SetActions(json& mig, int creating, int deleting, int none) {
  mig["currentActions"] = {{"none", none}, {"creating", creating}, {"creatingWithoutRetries", 0},
                           {"verifying", 0}, {"recreating", 0}, {"deleting", deleting},
                           {"abandoning", 0}, {"restarting", 0}, {"refreshing", 0},
                           {"suspending", 0}, {"resuming", 0}, {"stopping", 0}, {"starting", 0}};
}

}  // namespace

void CreatePoolInstanceGroups(CloudState& state, const PoolRecord& pool, int64_t now_ms) {
  ForEachGroupKey(pool, [&](const std::string& key) {
    // projects/P/zones/Z/instanceGroupManagers/N
    const std::string scope = key.substr(0, key.find("/instanceGroupManagers/"));
    const std::string name = key.substr(key.rfind('/') + 1);
    const std::string project = key.substr(9, key.find('/', 9) - 9);
    // GKE's template for the group: "gke-…-grp" groups use the pool's template of the same stem.
    std::string stem = name.size() > 4 && name.ends_with("-grp") ? name.substr(0, name.size() - 4) : name;
    json mig = {{"kind", "compute#instanceGroupManager"},
                {"id", std::to_string(state.next_id++)},
                {"name", name},
                {"creationTimestamp", Rfc3339(now_ms)},
                {"description", ""},
                {"zone", std::string(kComputePrefix) + scope},
                {"instanceGroup", std::string(kComputePrefix) + scope + "/instanceGroups/" + name},
                {"instanceTemplate", std::string(kComputePrefix) + "projects/" + project +
                                         "/global/instanceTemplates/" + stem},
                {"baseInstanceName", stem},
                {"targetSize", pool.node_count},
                {"fingerprint", "42WmSpB8rSM="},
                {"listManagedInstancesResults", "PAGELESS"},
                {"status", {{"isStable", false}, {"versionTarget", {{"isReached", true}}}}},
                {"updatePolicy", {{"type", "OPPORTUNISTIC"}, {"minimalAction", "REPLACE"},
                                  {"replacementMethod", "SUBSTITUTE"},
                                  {"maxSurge", {{"fixed", 1}, {"calculated", 1}}},
                                  {"maxUnavailable", {{"fixed", 1}, {"calculated", 1}}}}},
                {"selfLink", std::string(kComputePrefix) + key}};
    SetActions(mig, pool.node_count, 0, 0);
    state.compute[key] = std::move(mig);
  });
}

void SizePoolInstanceGroups(CloudState& state, const PoolRecord& pool, bool stable) {
  ForEachGroupKey(pool, [&](const std::string& key) {
    auto it = state.compute.find(key);
    if (it == state.compute.end()) return;
    json& mig = it->second;
    const int before = mig.value("targetSize", 0);
    mig["targetSize"] = pool.node_count;
    mig["status"]["isStable"] = stable;
    if (stable) SetActions(mig, 0, 0, pool.node_count);
    else SetActions(mig, std::max(0, pool.node_count - before), std::max(0, before - pool.node_count), 0);
  });
}

void RelocatePoolInstanceGroups(CloudState& state, PoolRecord& pool, const json& locations,
                                int64_t now_ms) {
  json urls = pool.wire.value("instanceGroupUrls", json::array());
  if (urls.empty() || !urls[0].is_string()) {
    pool.wire["locations"] = locations;
    return;
  }
  // GKE names a pool's groups alike in every zone: keep the first one's name.
  const std::string first = urls[0].get<std::string>();
  const std::string name = first.substr(first.rfind('/') + 1);
  const std::string key = KeyOf(first);
  const std::string project = key.substr(9, key.find('/', 9) - 9);
  DeletePoolInstanceGroups(state, pool);
  json moved = json::array();
  for (const auto& z : locations)
    moved.push_back(std::string(kComputePrefix) + "projects/" + project + "/zones/" +
                    z.get<std::string>() + "/instanceGroupManagers/" + name);
  pool.wire["locations"] = locations;
  pool.wire["instanceGroupUrls"] = moved;
  CreatePoolInstanceGroups(state, pool, now_ms);
}

void DeletePoolInstanceGroups(CloudState& state, const PoolRecord& pool) {
  ForEachGroupKey(pool, [&](const std::string& key) { state.compute.erase(key); });
}

}  // namespace tpu::sim
