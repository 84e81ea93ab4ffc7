// A stand-in for the startup script on every VM of a TPUNodeGroup, for
// end-to-end tests of the node join: it reads each instance's metadata from
// the Compute emulator (what the VM's metadata server would serve), and once
// the join keys are there it registers the VM's Node through the Kubernetes
// emulator with the token as its only credential, then reports Ready as the
// kubelet does. Joining can be held back, to stop the story mid-join.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "cloud/compute_client.h"

namespace tpu::daemon::testing {

class FakeVmAgent {
 public:
  struct Expect {
    std::string ca_hash, control_plane;
  };
  FakeVmAgent(cloud::ComputeClient& compute, int kube_port, std::string project, std::string zone,
              std::vector<std::string> migs, Expect expect)
      : compute_(compute), kube_port_(kube_port), project_(std::move(project)), zone_(std::move(zone)),
        migs_(std::move(migs)), expect_(std::move(expect)) {}
  ~FakeVmAgent() { Stop(); }

  void Start() {
    thread_ = std::thread([this] {
      while (!stop_) {
        Tick();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  void AllowJoin(bool allow) { allow_ = allow; }

  // Every token any VM was ever handed, by instance.
  std::map<std::string, std::set<std::string>> TokensSeen() const {
    std::lock_guard<std::mutex> lock(mu_);
    return tokens_;
  }
  std::set<std::string> Joined() const {
    std::lock_guard<std::mutex> lock(mu_);
    return joined_;
  }
  // Join keys that were wrong (CA pin, control plane), or refused joins.
  std::vector<std::string> Problems() const {
    std::lock_guard<std::mutex> lock(mu_);
    return problems_;
  }

 private:
  void Tick() {
    for (const auto& mig : migs_) Tick(mig);
  }
  void Tick(const std::string& mig) {
    auto vms = compute_.ListManagedInstances(project_, zone_, mig);
    if (!vms.ok()) return;
    for (const auto& vm : *vms) {
      if (vm.instance_status != "RUNNING" || Joined().count(vm.name)) continue;
      auto instance = compute_.GetInstance(project_, zone_, vm.name);
      if (!instance.ok()) continue;
      std::map<std::string, std::string> md(instance->metadata.begin(), instance->metadata.end());
      const std::string token = md["kubeadm-join-token"];
      if (token.empty()) continue;
      {
        std::lock_guard<std::mutex> lock(mu_);
        tokens_[vm.name].insert(token);
        if (md["kubeadm-ca-hash"] != expect_.ca_hash) problems_.push_back(vm.name + ": ca hash " + md["kubeadm-ca-hash"]);
        if (md["kubeadm-control-plane-ip"] != expect_.control_plane)
          problems_.push_back(vm.name + ": control plane " + md["kubeadm-control-plane-ip"]);
      }
      if (allow_) Join(vm.name, token);
    }
  }

  void Join(const std::string& name, const std::string& token) {
    httplib::Client kube("127.0.0.1", kube_port_);
    kube.set_bearer_token_auth(token);
    nlohmann::json node = {{"apiVersion", "v1"},
                           {"kind", "Node"},
                           {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
                           {"spec", {{"providerID", "gce://" + project_ + "/" + zone_ + "/" + name}}}};
    auto created = kube.Post("/api/v1/nodes", node.dump(), "application/json");
    if (!created || (created->status != 201 && created->status != 409)) {
      std::lock_guard<std::mutex> lock(mu_);
      problems_.push_back(name + ": register answered " + (created ? std::to_string(created->status) : "nothing"));
      return;
    }
    nlohmann::json status = {{"status", {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
    auto ready = kube.Patch(("/api/v1/nodes/" + name + "/status").c_str(), status.dump(),
                            "application/merge-patch+json");
    if (!ready || ready->status != 200) return;
    std::lock_guard<std::mutex> lock(mu_);
    joined_.insert(name);
  }

  cloud::ComputeClient& compute_;
  const int kube_port_;
  const std::string project_, zone_;
  const std::vector<std::string> migs_;
  const Expect expect_;
  std::atomic<bool> stop_{false}, allow_{true};
  mutable std::mutex mu_;
  std::map<std::string, std::set<std::string>> tokens_;
  std::set<std::string> joined_;
  std::vector<std::string> problems_;
  std::thread thread_;
};

}  // namespace tpu::daemon::testing
