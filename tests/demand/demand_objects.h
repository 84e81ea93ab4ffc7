// The Kubernetes objects a JobSet on TPUs consists of, as JobSet's controller
// and the Job controller write them: the JobSet, and per Job its pods with the
// labels and completion-index annotation the demand module reads. Shared by
// the demand integration tests and the daemon's end-to-end test.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "demand/names.h"

namespace tpu::demand::testing {

// JobSet's key is a SHA-1 of the Job's namespaced name; any stable 40 hex digits do here.
inline std::string JobKey(const std::string& jobset, int job) {
  std::string seed = std::to_string(std::hash<std::string>{}(jobset + "/" + std::to_string(job)));
  std::string key;
  for (char c : seed) key += "0123456789abcdef"[(c - '0') % 16];
  while (key.size() < 40) key += key;
  return key.substr(0, 40);
}

inline std::string PodName(const std::string& jobset, int job, int index) {
  return jobset + "-slice-" + std::to_string(job) + "-" + std::to_string(index);
}

// Pod `index` of Job `job`, asking `tpu` chips of accelerator+topology.
inline nlohmann::json PodJson(const std::string& ns, const std::string& jobset, int job, int index,
                              const std::string& accelerator, const std::string& topology, int tpu) {
  using nlohmann::json;
  return {{"apiVersion", "v1"}, {"kind", "Pod"},
          {"metadata", {{"name", PodName(jobset, job, index)}, {"namespace", ns},
                        {"labels", {{kJobSetNameLabel, jobset}, {kJobKeyLabel, JobKey(jobset, job)}}},
                        {"annotations", {{kCompletionIndexAnnotation, std::to_string(index)}}}}},
          {"spec", {{"nodeSelector", {{kAcceleratorSelector, accelerator}, {kTopologySelector, topology}}},
                    {"containers", {{{"name", "main"}, {"image", "jax"},
                                     {"resources", {{"limits", {{kTpuResource, std::to_string(tpu)}}}}}}}}}}};
}

// The status kube-scheduler writes when no node fits (a merge patch for /status).
inline nlohmann::json UnschedulableStatus() {
  return {{"status", {{"phase", "Pending"},
                      {"conditions", {{{"type", "PodScheduled"}, {"status", "False"},
                                       {"reason", "Unschedulable"}}}}}}};
}

// A JobSet of `jobs` Jobs with exclusive placement per node pool.
inline nlohmann::json JobSetJson(const std::string& ns, const std::string& name, int jobs) {
  return {{"apiVersion", "jobset.x-k8s.io/v1alpha2"}, {"kind", "JobSet"},
          {"metadata", {{"name", name}, {"namespace", ns},
                        {"annotations", {{"alpha.jobset.sigs.k8s.io/exclusive-topology",
                                          "cloud.google.com/gke-nodepool"}}}}},
          {"spec", {{"replicatedJobs", {{{"name", "slice"}, {"replicas", jobs}}}}}}};
}

}  // namespace tpu::demand::testing
