// What the demand module reads from Kubernetes objects, as plain values:
// a JobSet's leader pod asking for a TPU slice, and a JobSet's lifecycle.
// Parsing only; the decisions are in decide.h.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace tpu::demand {

using TimePoint = std::chrono::system_clock::time_point;

// The leader pod (completion index 0) of one Job of a JobSet, Pending and
// Unschedulable, with the TPU request and selectors that say which slice.
struct LeaderPod {
  std::string ns;
  std::string name;
  std::string jobset;
  std::string job_key;
  std::string accelerator;  // nodeSelector gke-tpu-accelerator
  std::string topology;     // nodeSelector gke-tpu-topology
  std::string jobset_uid;   // label jobset.sigs.k8s.io/jobset-uid ("" on older JobSets)
  int tpu_request = 0;      // google.com/tpu of the pod (all containers): chips per VM
  // Every whole-number request of the pod (all containers, requests else
  // limits), so a cluster may count another resource name as TPU chips.
  std::map<std::string, int> requests;
  bool spot = false;        // nodeSelector cloud.google.com/gke-spot: "true"
  std::string reservation;  // nodeSelector cloud.google.com/reservation-name
  std::string reservation_project;  // nodeSelector cloud.google.com/reservation-project
  std::map<std::string, std::string> node_selector;
  std::map<std::string, std::string> labels;  // the pod's, for copy-labels
  // The GKE TPU Provisioner's per-pod annotations ("" when absent).
  std::string copy_labels;           // comma-separated pod label keys
  std::string additional_networks;   // "vpc:subnet, vpc2:subnet2"
  std::optional<std::string> node_service_account;
  // tpu-provisioner.io/disable-autoprovisioning: "true" as an annotation, or
  // the original's tpu-provisioner.cloud.google.com/… as a label or annotation.
  bool opted_out = false;
  int Request(const std::string& resource) const {
    auto it = requests.find(resource);
    return it == requests.end() ? 0 : it->second;
  }
  std::string Key() const { return ns + "/" + name; }
  std::string JobSetKey() const { return ns + "/" + jobset; }
};

// nullopt unless `pod` is a JobSet leader waiting for nodes: completion index
// "0", the JobSet name and job-key labels, phase Pending, PodScheduled=False
// with reason Unschedulable, no nodeName, not being deleted, a whole-number
// resource request and both TPU nodeSelectors. Which request counts as TPU
// chips is the cluster's policy (spec.demand.tpuResource), read later.
std::optional<LeaderPod> ParseLeader(const nlohmann::json& pod);

struct JobSetState {
  std::string ns;
  std::string name;
  std::string uid;
  bool finished = false;  // Completed or Failed condition True, or being deleted
  std::string outcome;    // "completed" | "failed" | "deleted" | "" (running)
  TimePoint finished_at{};  // the condition's lastTransitionTime (survives our restarts)
  int restarts = 0;       // status.restarts
  std::string Key() const { return ns + "/" + name; }
};

JobSetState ParseJobSet(const nlohmann::json& jobset);

}  // namespace tpu::demand
