// Test helpers for the Kubernetes client: a temporary directory, a fake
// clock, and an emulator plus a RestClient pointed at it.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "base/fake_env.h"
#include "kube/timestamps.h"
#include "kube/leader_election.h"
#include "kube/rest_client.h"
#include "sim/kube/api_server.h"

namespace tpu::kube::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kube_test_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& text, bool executable = false) {
    std::string p = path_ + "/" + name;
    std::ofstream(p) << text;
    if (executable) std::filesystem::permissions(p, std::filesystem::perms::owner_all);
    return p;
  }

 private:
  std::string path_;
};

inline kubesim::KubeApiServer::Options KueueVersions(std::vector<std::string> versions) {
  kubesim::KubeApiServer::Options o;
  o.kueue_versions = std::move(versions);
  return o;
}

inline kubesim::KubeApiServer::Options Authorize(std::function<bool(const std::string&)> fn) {
  kubesim::KubeApiServer::Options o;
  o.authorize = std::move(fn);
  return o;
}

// An emulator and a client for it.
struct Cluster {
  explicit Cluster(kubesim::KubeApiServer::Options o = {}) : api(std::move(o)) {
    if (!api.Start().ok()) std::abort();
    RestConfig rc;
    rc.server = api.url();
    client = std::make_unique<RestClient>(rc);
  }
  kubesim::KubeApiServer api;
  std::unique_ptr<RestClient> client;
};

// Creates a Node of GKE node pool `pool`, Ready or not (status written
// through /status, as kubelet does).
inline void AddNode(KubeClient& c, const std::string& name, const std::string& pool, bool ready,
                    int chips = 4) {
  const ResourceRef kNodes{"", "v1", "nodes", "Node", false};
  nlohmann::json node = {{"apiVersion", "v1"}, {"kind", "Node"},
                         {"metadata", {{"name", name}, {"labels", {{"cloud.google.com/gke-nodepool", pool}}}}}};
  if (!c.Create(kNodes, "", node).ok() && !c.Get(kNodes, "", name).ok()) std::abort();
  nlohmann::json status = {{"status",
                            {{"allocatable", {{"google.com/tpu", std::to_string(chips)}}},
                             {"conditions", {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}}}}}};
  if (!c.MergePatch(kNodes, "", name, status, "status").ok()) std::abort();
}

// A Lease in namespace "default" held under `identity`.
inline LeaseConfig Lease(const std::string& identity) {
  LeaseConfig c;
  c.identity = identity;
  c.ns = "default";
  return c;
}

}  // namespace tpu::kube::testing
