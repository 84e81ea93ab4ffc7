// Everything the cloud emulator knows: GKE clusters and node pools, Compute
// resources, operations of both APIs, and the capacity model. Resources are
// kept in their wire form (the JSON the real API returns), plus the few
// private facts the wire form does not show (a pool's current size, the chips
// it holds). Plain data, guarded by the emulator's lock; serializes to JSON
// for the state file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/cloud_capacity.h"
#include "sim/sim_http.h"

namespace tpu::sim {

// What happens to the state when an operation reaches DONE.
enum class OpEffect {
  kNone,
  kCreateCluster,   // cluster PROVISIONING → RUNNING
  kDeleteCluster,   // cluster and its pools removed
  kCreatePool,      // pool PROVISIONING → RUNNING, or ERROR when `error` is set
  kDeletePool,      // pool removed, its chips released
  kReconcilePool,   // pool RECONCILING → RUNNING (update, setSize, autoscaling…)
  kDeleteCompute,   // Compute resource removed
  kMigStable,       // instance group manager reaches its target size
  kDeleteInstance,  // a Compute instance removed (instances.delete)
};

struct OpRecord {
  json wire;                  // the Operation exactly as the API returns it
  bool compute = false;       // Compute operation (else GKE)
  std::string cluster_key;    // GKE: "P/L/C" of the cluster it works on
  std::string target_key;     // key of the resource `effect` applies to
  OpEffect effect = OpEffect::kNone;
  int64_t start_ms = 0;       // wall clock, so a restarted emulator resumes it
  int64_t done_ms = 0;
  json error;                 // non-null: the operation ends with this error
  bool done = false;
  // Not persisted: AdvanceOperations has looked at this operation since it
  // reached its RUNNING time, so it no longer reads its wire status per request.
  bool running_seen = false;
};

struct PoolRecord {
  json wire;                  // the NodePool as the API returns it
  int node_count = 0;         // nodes per zone now (setSize changes it, not initialNodeCount)
  int64_t chips = 0;          // chips held from the capacity model
  std::string zone;
  std::string accelerator;    // "" for a non-TPU pool
  std::string reservation;    // reservation the chips came from, if any
};

// A Compute instance (compute_instances.h): its wire form plus what ties it
// to its managed instance group and to the operation that will settle it.
struct InstanceRecord {
  json wire;                  // the Instance; `status` is derived on read while op_key runs
  std::string mig_key;        // "projects/P/zones/Z/instanceGroupManagers/N", "" for none
  std::string action;         // the group's currentAction: CREATING, NONE, DELETING
  std::string op_key;         // compute_ops key of the operation settling it, "" when settled
  bool removing = false;      // goes away when op_key ends
  json errors;                // lastAttempt errors ([{code, message}]), null when none
  std::string reservation;    // "P/N" the instance holds a VM of, "" for none
  int64_t chips = 0;          // chips held from that reservation
};

struct CloudState {
  std::map<std::string, json> clusters;       // "P/L/C" → Cluster without nodePools
  std::map<std::string, PoolRecord> pools;    // "P/L/C/N"
  std::map<std::string, json> compute;        // "projects/P/zones/Z/instanceGroupManagers/N" → resource
  std::map<std::string, InstanceRecord> instances;  // "projects/P/zones/Z/instances/N"
  std::map<std::string, OpRecord> gke_ops;    // "P/operation-…"
  std::map<std::string, OpRecord> compute_ops;  // "projects/P/zones/Z/operations/operation-…"
  CapacityModel capacity;
  uint64_t next_id = 1000000000000000000ull;  // Compute numeric ids
  // The operations not DONE yet, pointing into gke_ops and compute_ops (map
  // nodes never move, and no operation is ever erased): AdvanceOperations,
  // which runs twice per request, visits these rather than every operation
  // ever started. Derived, not serialized. Hence no copies, only moves.
  std::vector<OpRecord*> live_ops;
  // Not persisted: before this time no live GKE operation changes (turns
  // RUNNING or ends), so AdvanceOperations need not look at them; 0 = unknown.
  // Whoever adds to live_ops resets it.
  int64_t quiet_until_ms = 0;

  CloudState() = default;
  CloudState(const CloudState&) = delete;
  CloudState& operator=(const CloudState&) = delete;
  CloudState(CloudState&&) = default;
  CloudState& operator=(CloudState&&) = default;

  json ToJson() const;
  // REQUIRES: `j` came from ToJson(). Throws json exceptions on a corrupt file.
  static CloudState FromJson(const json& j);
};

}  // namespace tpu::sim
