// The emulator's JSON config file (CloudEmulatorConfigFromJson) and the JSON
// form of its counters.
#include "sim/cloud_emulator.h"

namespace tpu::sim {

Result<CloudEmulatorConfig> CloudEmulatorConfigFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("emulator config: expected a JSON object");
  static const char* kKnown[] = {"opLatencyMs", "requestLatencyMs", "token", "faults",
                                 "capacity", "recordFile", "clusters",
                                 "concurrentOperationsQuota", "releaseChannel"};
  for (const auto& [key, v] : j.items()) {
    bool known = false;
    for (const char* k : kKnown) known |= key == k;
    if (!known) return Status::InvalidArgument("emulator config: unknown key \"" + key + "\"");
  }
  CloudEmulatorConfig c;
  try {
    if (j.contains("opLatencyMs")) {
      c.options.op_latency_ms.clear();
      for (const auto& [k, v] : j["opLatencyMs"].items()) c.options.op_latency_ms[k] = v.get<int>();
    }
    c.options.request_latency_ms = j.value("requestLatencyMs", 0);
    c.options.required_token = j.value("token", "");
    if (j.contains("faults")) {
      auto f = FaultConfigFromJson(j["faults"]);
      if (!f.ok()) return f.status().WithContext("emulator config");
      c.options.faults = *f;
    }
    c.options.capacity = j.value("capacity", json::object());
    c.options.record_file = j.value("recordFile", "");
    c.options.concurrent_operations_quota = j.value("concurrentOperationsQuota", 5);
    if (c.options.concurrent_operations_quota < 1)
      return Status::InvalidArgument("emulator config: concurrentOperationsQuota must be at least 1");
    c.options.release_channel = j.value("releaseChannel", "REGULAR");
    for (const auto& cl : j.value("clusters", json::array())) {
      CloudEmulatorConfig::Cluster cluster{cl.at("project"), cl.at("location"), cl.at("name"), {}};
      if (cl.contains("releaseChannel")) cluster.release_channel = cl["releaseChannel"].get<std::string>();
      c.clusters.push_back(std::move(cluster));
    }
  } catch (const json::exception& e) {
    return Status::InvalidArgument(std::string("emulator config: ") + e.what());
  }
  return c;
}

json CloudCounters::ToJson() const {
  return {{"calls", calls},
          {"mutatingCalls", mutating_calls},
          {"callsByRoute", calls_by_route},
          {"mutationsByProject", mutations_by_project},
          {"mutationsByCluster", mutations_by_cluster},
          {"peakOperationsByCluster", peak_operations_by_cluster}};
}

}  // namespace tpu::sim
