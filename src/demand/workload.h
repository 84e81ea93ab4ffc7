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
  int tpu_request = 0;      // google.com/tpu of the pod (all containers): chips per VM
  bool spot = false;        // nodeSelector cloud.google.com/gke-spot: "true"
  std::string reservation;  // nodeSelector cloud.google.com/reservation-name
  std::map<std::string, std::string> node_selector;
  bool opted_out = false;   // tpu-provisioner.io/disable-autoprovisioning: "true"
  std::string Key() const { return ns + "/" + name; }
  std::string JobSetKey() const { return ns + "/" + jobset; }
};

// nullopt unless `pod` is a JobSet leader waiting for nodes: completion index
// "0", the JobSet name and job-key labels, phase Pending, PodScheduled=False
// with reason Unschedulable, no nodeName, not being deleted, a google.com/tpu
// request and both TPU nodeSelectors.
std::optional<LeaderPod> ParseLeader(const nlohmann::json& pod);

struct JobSetState {
  std::string ns;
  std::string name;
  bool finished = false;  // Completed or Failed condition True, or being deleted
  std::string outcome;    // "completed" | "failed" | "deleted" | "" (running)
  TimePoint finished_at{};  // the condition's lastTransitionTime (survives our restarts)
  int restarts = 0;       // status.restarts
  std::string Key() const { return ns + "/" + name; }
};

JobSetState ParseJobSet(const nlohmann::json& jobset);

}  // namespace tpu::demand
