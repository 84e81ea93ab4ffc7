// Leader pods and JobSet states from their JSON.
#include "demand/workload.h"

#include "demand/names.h"
#include "kube/timestamps.h"

namespace tpu::demand {
namespace {

using nlohmann::json;

std::string StrAt(const json& j, const char* a, const char* b) {
  if (!j.is_object() || !j.contains(a) || !j[a].is_object()) return "";
  const json& m = j[a];
  auto it = m.find(b);
  return it != m.end() && it->is_string() ? it->get<std::string>() : "";
}

// "4", 4 → 4; quantities of whole chips only (TPUs are not divisible).
int Quantity(const json& v) {
  if (v.is_number_integer()) return v.get<int>();
  if (v.is_string()) {
    try {
      size_t used = 0;
      int n = std::stoi(v.get<std::string>(), &used);
      return used == v.get<std::string>().size() ? n : 0;
    } catch (...) {
      return 0;
    }
  }
  return 0;
}

// Per resource name, the sum over containers of its request (else its limit,
// which Kubernetes copies into an unset request of an extended resource).
std::map<std::string, int> Requests(const json& spec) {
  std::map<std::string, int> total;
  for (const auto& c : spec.value("containers", json::array())) {
    const json res = c.value("resources", json::object());
    const json requests = res.value("requests", json::object());
    const json limits = res.value("limits", json::object());
    std::map<std::string, int> mine;
    for (const json* m : {&limits, &requests})
      if (m->is_object())
        for (auto it = m->begin(); it != m->end(); ++it)
          if (int n = Quantity(*it); n > 0) mine[it.key()] = n;
    for (const auto& [k, n] : mine) total[k] += n;
  }
  return total;
}

std::map<std::string, std::string> StringMapAt(const json& j, const char* key) {
  std::map<std::string, std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return out;
  for (auto e = it->begin(); e != it->end(); ++e)
    if (e->is_string()) out[e.key()] = e->get<std::string>();
  return out;
}

bool Unschedulable(const json& status) {
  for (const auto& c : status.value("conditions", json::array()))
    if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False" &&
        c.value("reason", "") == "Unschedulable")
      return true;
  return false;
}

}  // namespace

std::optional<LeaderPod> ParseLeader(const json& pod) {
  const json meta = pod.value("metadata", json::object());
  const json spec = pod.value("spec", json::object());
  const json status = pod.value("status", json::object());
  if (meta.contains("deletionTimestamp")) return std::nullopt;
  LeaderPod p;
  p.ns = meta.value("namespace", "");
  p.name = meta.value("name", "");
  if (StrAt(meta, "annotations", kCompletionIndexAnnotation) != "0") return std::nullopt;
  p.jobset = StrAt(meta, "labels", kJobSetNameLabel);
  p.job_key = StrAt(meta, "labels", kJobKeyLabel);
  if (p.jobset.empty() || p.job_key.empty()) return std::nullopt;
  if (status.value("phase", "") != "Pending" || !spec.value("nodeName", "").empty() ||
      !Unschedulable(status))
    return std::nullopt;
  p.requests = Requests(spec);
  if (p.requests.empty()) return std::nullopt;
  p.tpu_request = p.Request(kTpuResource);
  p.node_selector = StringMapAt(spec, "nodeSelector");
  p.labels = StringMapAt(meta, "labels");
  p.jobset_uid = StrAt(meta, "labels", kJobSetUidLabel);
  auto sel = [&](const char* k) {
    auto it = p.node_selector.find(k);
    return it == p.node_selector.end() ? std::string() : it->second;
  };
  p.accelerator = sel(kAcceleratorSelector);
  p.topology = sel(kTopologySelector);
  if (p.accelerator.empty() || p.topology.empty()) return std::nullopt;
  p.spot = sel(kSpotSelector) == "true";
  p.reservation = sel(kReservationSelector);
  p.reservation_project = sel(kReservationProjectSelector);
  const auto annotations = StringMapAt(meta, "annotations");
  auto annotation = [&](const char* k) {
    auto it = annotations.find(k);
    return it == annotations.end() ? std::string() : it->second;
  };
  p.copy_labels = annotation(kCompatCopyLabels);
  p.additional_networks = annotation(kCompatAdditionalNetworks);
  if (annotations.count(kCompatNodeServiceAccount)) p.node_service_account = annotation(kCompatNodeServiceAccount);
  p.opted_out = annotation(kDisableAnnotation) == "true" || annotation(kCompatDisableKey) == "true" ||
                StrAt(meta, "labels", kCompatDisableKey) == "true";
  return p;
}

JobSetState ParseJobSet(const json& js) {
  const json meta = js.value("metadata", json::object());
  const json status = js.value("status", json::object());
  JobSetState s;
  s.ns = meta.value("namespace", "");
  s.name = meta.value("name", "");
  s.uid = meta.value("uid", "");
  s.restarts = status.value("restarts", 0);
  for (const auto& c : status.value("conditions", json::array())) {
    std::string type = c.value("type", "");
    if ((type != "Completed" && type != "Failed") || c.value("status", "") != "True") continue;
    s.finished = true;
    s.outcome = type == "Completed" ? "completed" : "failed";
    kube::ParseTime(c.value("lastTransitionTime", ""), &s.finished_at);
  }
  if (meta.contains("deletionTimestamp") && meta["deletionTimestamp"].is_string()) {
    s.finished = true;
    s.outcome = "deleted";
    kube::ParseTime(meta["deletionTimestamp"].get<std::string>(), &s.finished_at);
  }
  return s;
}

}  // namespace tpu::demand
