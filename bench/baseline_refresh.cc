// Per-resource GET refresh (see baseline_refresh.h).
#include "bench/baseline_refresh.h"

#include <atomic>
#include <thread>
#include <vector>

#include "cloud/cloud.h"
#include "manifest/disk_tree.h"
#include "manifest/loader.h"
#include "sim/state_file.h"

namespace tpu::bench {
namespace {

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t at; (at = s.find(sep, start)) != std::string::npos; start = at + 1)
    out.push_back(s.substr(start, at - start));
  out.push_back(s.substr(start));
  return out;
}

}  // namespace

Result<BaselineSummary> RunBaselineRefresh(const std::string& repo_path, const std::string& state_file,
                                           const std::string& endpoint, int parallelism) {
  auto tree = manifest::DiskTree::Open(repo_path);
  if (!tree.ok()) return tree.status();
  manifest::Repo repo = manifest::LoadRepo(**tree);
  if (repo.targets.empty()) return Status::InvalidArgument(repo_path + ": no targets");

  auto state = sim::ReadStateFile(state_file);
  if (!state.ok()) return state.status();
  if (!state->has_value()) return Status::NotFound(state_file + ": missing");
  std::vector<std::string> keys;
  for (const auto& [k, v] : (**state)["pools"].items()) keys.push_back("pool:" + k);
  // The instance groups GKE makes for its node pools ("gke-…-grp") come with the
  // pools: Terraform's node pool resource covers them, so they get no GET of their own.
  for (const auto& [k, v] : (**state)["compute"].items())
    if (k.find("/instanceGroupManagers/gke-") == std::string::npos) keys.push_back(k);

  cloud::CloudOptions co;
  co.endpoints.container = endpoint;
  co.endpoints.compute = endpoint;
  auto conn = cloud::CloudConnection::Open(co);
  if (!conn.ok()) return conn.status();
  cloud::GkeClient& gke = (*conn)->gke();
  cloud::ComputeClient& compute = (*conn)->compute();

  std::atomic<size_t> next{0};
  std::atomic<int> found{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < keys.size();) {
      const std::string& key = keys[i];
      bool ok = false;
      if (key.rfind("pool:", 0) == 0) {
        auto p = Split(key.substr(5), '/');  // P/L/C/N
        if (p.size() == 4) ok = gke.GetNodePool({{p[0], p[1], p[2]}, p[3]}).ok();
      } else {
        auto p = Split(key, '/');  // projects/P/{zones/Z,regions/R,global}/collection/N
        if (p.size() == 6 && p[4] == "instanceGroupManagers") {
          ok = compute.GetInstanceGroupManager(p[1], p[3], p[5]).ok();
        } else if (p.size() == 6 && p[4] == "resourcePolicies") {
          ok = compute.GetWorkloadPolicy(p[1], p[3], p[5]).ok();
        } else if (p.size() == 5 && p[3] == "instanceTemplates") {
          ok = compute.GetInstanceTemplate(p[1], p[4]).ok();
        }
      }
      if (ok) ++found;
    }
  };
  std::vector<std::jthread> workers;
  for (int t = 0; t < std::max(parallelism, 1); ++t) workers.emplace_back(work);
  workers.clear();
  return BaselineSummary{static_cast<int>(keys.size()), found.load()};
}

}  // namespace tpu::bench
