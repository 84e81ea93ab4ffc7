// CloudEmulator: an HTTP server on loopback that speaks the parts of the GKE
// (container.googleapis.com/v1) and Compute (compute.googleapis.com/compute/v1)
// REST APIs the reconciler uses, as the real APIs do (docs/emulator.md lists
// what is modelled). Used by tests, the quickstart (`--cloud sim[:FILE]`) and
// `tpu-provisioner sim`. Written from the API contract, not from src/cloud.
//
// Start() binds and serves on a background thread pool until Stop() or
// destruction. Every public method is thread-safe. Control endpoints under
// /sim/ (no token needed) read counters, seed state, set capacity and faults:
//   GET  /sim/counters          POST /sim/reset {"state":bool,"faults":bool}
//   GET  /sim/state             POST /sim/seed {"clusters":[…],"nodePools":[…]}
//   GET/POST /sim/capacity      GET/POST /sim/faults
//   POST /sim/reclaim {"zone"} or {"project","location","cluster","nodePool"}
//   POST /sim/record {"file":PATH}   (JSON lines of every API exchange; "" stops)
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "sim/cloud_faults.h"
#include "sim/sim_http.h"

namespace tpu::sim {

struct CloudEmulatorOptions {
  std::string host = "127.0.0.1";
  int port = 0;                          // 0: an ephemeral port, see CloudEmulator::port()
  std::string state_file;                // "": memory only
  // Operation latency by type (GKE: CREATE_NODE_POOL, …; Compute: insert,
  // delete, compute.instanceGroupManagers.resize), "default" for the rest.
  std::map<std::string, int> op_latency_ms = {{"default", 200}};
  int request_latency_ms = 0;            // added to every API request (benchmarks)
  FaultConfig faults;
  std::string required_token;            // "": any non-empty bearer token
  json capacity = json::object();        // CapacityModel config (cloud_capacity.h)
  std::string record_file;               // "": no recording
  // GKE's concurrent-operations quota per cluster (node-pool operations in
  // flight at once; the 6th gets 429 RESOURCE_EXHAUSTED).
  int concurrent_operations_quota = 5;
  // The release channel clusters get unless their create says otherwise
  // (GKE enrolls new clusters in REGULAR); "" = none.
  std::string release_channel = "REGULAR";
  std::function<int64_t()> clock;        // wall clock in ms; default system_clock
};

// The config file of `tpu-provisioner sim --config`:
// {"opLatencyMs":{"default":200,…},"requestLatencyMs":0,"token":"…",
//  "faults":{…},"capacity":{…},"recordFile":"…","concurrentOperationsQuota":5,
//  "releaseChannel":"REGULAR",
//  "clusters":[{"project","location","name","releaseChannel"?}]}   (clusters: see `clusters` below)
struct CloudEmulatorConfig {
  CloudEmulatorOptions options;
  struct Cluster {
    std::string project, location, name;
    std::optional<std::string> release_channel;  // unset: options.release_channel
  };
  std::vector<Cluster> clusters;
};
Result<CloudEmulatorConfig> CloudEmulatorConfigFromJson(const json& j);

struct CloudCounters {
  int64_t calls = 0;                               // every API request (not /sim/)
  int64_t mutating_calls = 0;                      // POST/PUT/PATCH/DELETE, except …/wait
  std::map<std::string, int64_t> calls_by_route;   // "GET /v1/projects/{project}/locations/-/clusters"
  std::map<std::string, int64_t> mutations_by_project;
  std::map<std::string, int64_t> mutations_by_cluster;  // "P/L/C" (GKE only)
  // Most GKE operations seen running at once on each cluster "P/L/C".
  std::map<std::string, int64_t> peak_operations_by_cluster;
  json ToJson() const;
};

class CloudEmulator {
 public:
  explicit CloudEmulator(CloudEmulatorOptions options);
  ~CloudEmulator();
  CloudEmulator(const CloudEmulator&) = delete;
  CloudEmulator& operator=(const CloudEmulator&) = delete;

  // Loads the state file (if any) and starts serving.
  Status Start();
  // Stops serving; in-flight requests finish. Idempotent.
  void Stop();
  int port() const;
  std::string endpoint() const;  // "http://127.0.0.1:PORT"

  // A RUNNING cluster with no node pools, created at once unless it exists,
  // in `release_channel` ("" = none; unset = options.release_channel).
  Status EnsureCluster(const std::string& project, const std::string& location,
                       const std::string& name,
                       std::optional<std::string> release_channel = std::nullopt);

  CloudCounters counters() const;
  void ResetCounters();
  void SetZoneCapacity(const std::string& zone, const std::string& accelerator, int64_t chips);
  void SetCapacity(const json& config);  // CapacityModel::Apply
  Status SetFaults(const FaultConfig& faults);
  // Reclaims spot capacity: the pool (or every spot pool in `zone` when
  // pool is empty) drops to RUNNING_WITH_ERROR and gives its chips back.
  Status ReclaimSpot(const std::string& zone, const std::string& project = "",
                     const std::string& location = "", const std::string& cluster = "",
                     const std::string& pool = "");
  // The whole state as GET /sim/state gives it: operations due by now are
  // advanced first, as any reader of the API would see them.
  json StateSnapshot();

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tpu::sim
