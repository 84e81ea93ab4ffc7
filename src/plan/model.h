// The plan model: what `plan` decided and `apply` executes (docs/architecture.md, "Plan rules" and "Apply rules").
//
// Plain values, no behaviour beyond counting. A Plan is a list of TargetPlans,
// one per deploy/<project>/<cluster>/ directory (plus targets whose directory
// vanished while owned resources remain). Each TargetPlan holds Actions in
// execution order; every Action names one cloud resource, what to do with it,
// why (field paths before → after), its blast radius, the actions it depends
// on, and the full desired body so a saved plan (`plan -out FILE`) can be
// executed later without re-reading manifests. The plan also records a
// fingerprint of each project's live state it was computed from, so
// `apply FILE` can refuse when live state moved (see fingerprint.h).
//
// Serialised by plan_json.h (schema in docs/plan-json.md).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cloud/types.h"
#include "manifest/types.h"
#include "plan/body.h"

namespace tpu::plan {

// Version of the JSON document (docs/plan-json.md). Bumped on any incompatible change.
inline constexpr int kPlanSchemaVersion = 1;

enum class ActionKind {
  kNoop,     // in sync; listed so a plan shows what it looked at
  kCreate,
  kUpdate,   // in place: see Action::update_calls
  kResize,   // single-host node count only (GKE setSize / MIG resize)
  kReplace,  // delete + create (order per TargetPlan::replace_strategy)
  kDelete,
};

enum class ResourceKind {
  kNodePool,              // GKE node pool (TPUNodePool slice)
  kWorkloadPolicy,        // Compute resourcePolicies (regional)
  kInstanceTemplate,      // Compute instanceTemplates (global)
  kInstanceGroupManager,  // Compute instanceGroupManagers (zonal)
};

// The API calls an in-place update needs, in the order apply should issue them.
enum class UpdateCall {
  kUpdateNodePool,    // PUT nodePools/N: labels, taints, resourceLabels, tags (whole sets), version,
                      // imageType, diskSizeGb, diskType (the last three migrate the nodes)
  kUpdateLocations,   // PUT nodePools/N with `locations` alone (the proto: not with other fields)
  kSetAutoscaling,    // POST nodePools/N:setAutoscaling
  kSetManagement,     // POST nodePools/N:setManagement
  kSetSize,           // POST nodePools/N:setSize (autoscaling off)
  kSetInstanceTemplate,  // MIG setInstanceTemplate (INDIVIDUAL mode only)
  kResizeGroup,       // MIG resize?size=N
};

// Which resource. `location` is the GKE cluster location for node pools, the
// region for workload policies, the zone for MIGs, empty for templates.
struct ResourceRef {
  ResourceKind kind = ResourceKind::kNodePool;
  std::string project;
  std::string location;
  std::string cluster;  // node pools only
  std::string name;
  // Unique within a plan: "nodePool:P/L/C/N", "workloadPolicy:P/R/N",
  // "instanceTemplate:P/N", "instanceGroupManager:P/Z/N".
  std::string Id() const;
  bool operator==(const ResourceRef&) const = default;
};

// One differing field. Values are rendered compactly (JSON-like: strings
// quoted, maps `{k=v, …}`, lists `[a, b]`, "(unset)" when absent).
struct FieldChange {
  std::string path;    // "config.labels[team]", "placementPolicy.tpuTopology"
  std::string before;  // live
  std::string after;   // desired
  bool forces_replace = false;  // this field alone would force a replace
  bool operator==(const FieldChange&) const = default;
};

// What an action creates and destroys. A replace counts both sides.
struct BlastRadius {
  int chips_created = 0;
  int chips_destroyed = 0;
  int hosts_created = 0;
  int hosts_destroyed = 0;
  bool multi_host = false;
  // The created side autoscales (a slice 0 ↔ its VMs): its chips and hosts
  // are possible capacity, there once workloads make the autoscaler ask.
  bool autoscaled = false;
  bool operator==(const BlastRadius&) const = default;
};

// What kind of TPU capacity an action's chips are (capacity_shape.h): for
// people, never for deciding anything. Empty when unknown or chipless.
struct CapacityShape {
  std::string generation;  // the catalog's name: "v6e"
  std::string topology;    // "4x4"; empty when unknown
  std::string capacity;    // as manifests spell it: onDemand | spot | reservation | flexStart
  bool empty() const { return generation.empty(); }
  bool operator==(const CapacityShape&) const = default;
};

struct Action {
  ActionKind kind = ActionKind::kNoop;
  ResourceRef resource;
  std::string target;  // "project/cluster"
  // Where it was declared ("deploy/p/c/pools.yaml:3:1 TPUNodePool/train"); empty for
  // deletes of resources no manifest declares any more.
  std::string source;
  // One line: "spec changed", "no longer declared", "node pool in ERROR: repair",
  // "target directory removed", "adopt unmanaged pool", …
  std::string reason;
  std::vector<FieldChange> changes;
  std::vector<UpdateCall> update_calls;  // kUpdate / kResize only
  BlastRadius blast;
  // Id()s of resources whose actions (in this plan) must finish first.
  std::vector<std::string> depends_on;
  // Node pool deletes only: the pool that fills this pool's slot instead (a
  // create-before-delete replacement an interrupted run made, see pool_slot.h).
  // The slot stays filled, so the mass-delete guard does not count it.
  std::string superseded_by;
  // An update of an unmanaged resource that already matches its manifest:
  // adopting it writes only our ownership labels, so it changes no capacity
  // and no configuration. Counted apart (Summary::adopt) and not a change a
  // plan reports, but still executed by apply and watch.
  bool adopt_only = false;
  // The capacity the action creates (create, replace, update, resize) and
  // destroys (delete, replace, update, resize); the old side of a replace
  // may differ from the new one.
  CapacityShape created_shape;
  CapacityShape destroyed_shape;

  // A slice of a capacity ladder (ladder.h), node pool creates and replaces:
  // the pool as each rung below node_pool's would make it, best first. On a
  // stockout, apply deletes what the failed create left and creates the next
  // one, so the slice moves down its ladder instead of waiting.
  std::vector<cloud::NodePool> fallbacks;
  // A move back up the ladder (replace): the new pool is created beside the
  // old one, which is deleted only once the new one runs, whatever the
  // target's replaceStrategy; a stockout leaves the old pool as it was.
  bool ladder_move = false;

  // Desired bodies (exactly one set for create/update/resize/replace, matching
  // resource.kind; a delete's is the live resource; a noop's only when
  // PlanOptions::noop_bodies). Node pools carry the ownership markers already.
  // Bodies (body.h), not optionals: an Action without one stays small.
  Body<cloud::NodePool> node_pool;
  Body<cloud::WorkloadPolicy> workload_policy;
  Body<cloud::InstanceTemplate> instance_template;
  Body<cloud::InstanceGroupManager> instance_group_manager;

  bool changes_something() const { return kind != ActionKind::kNoop; }
  bool destructive() const { return kind == ActionKind::kDelete || kind == ActionKind::kReplace; }
};

enum class TargetStatus {
  kPlanned,    // actions may be executed
  kBlocked,    // manifest errors or conflicts: no actions at all
  kRefused,    // a guard refused the plan (mass delete, prevent-destroy): actions shown, not executable
  kSuspended,  // Cluster.spec.suspend: nothing planned
};

// A live node pool a workload owns (a demand-driven pool): outside the diff,
// listed beside it so `plan` and `/status` show all the capacity there is.
struct WorkloadOwnedPool {
  std::string name;
  std::string jobset;  // "namespace/name", from its labels
  std::string status;  // the cloud's: PROVISIONING, RUNNING, ERROR, …
  int chips = 0;
  bool operator==(const WorkloadOwnedPool&) const = default;
};

// A reservation the target's pools and groups draw on, before and after the
// plan, in VMs (reservations.h).
struct ReservationUse {
  std::string name, project, zone;  // project: the owner (another one for a shared reservation)
  bool found = false;               // in the refresh; false: its numbers are unknown
  int count = 0;                    // specificReservation.count
  int in_use = 0;                   // inUseCount, before the plan
  int takes = 0;                    // VMs the plan's creates and growths take
  int frees = 0;                    // VMs its deletes and shrinks give back
  int blocked = 0;                  // VMs of the actions held back because they did not fit
  int FreeBefore() const { return count - in_use; }
  int FreeAfter() const { return count - in_use - takes + frees; }
  bool operator==(const ReservationUse&) const = default;
};

// Where a slice of a capacity ladder stands (ladder.h): the rung its pool is
// on (or, for a slice this plan creates, starts on), and why not a better one.
struct SliceRung {
  std::string pool;     // the slot, "<TPUNodePool name>-<slice>"
  int rung = 0;         // index into its spec.capacity list; -1: its pool is on none of them
  int rungs = 0;        // the ladder's length
  std::string capacity; // the rung's capacity (manifest::CapacityName)
  std::string why;      // one line: why this rung and not a better one
  bool operator==(const SliceRung&) const = default;
};

struct TargetPlan {
  std::string key;  // "project/cluster"
  std::string project;
  std::string cluster;
  std::string location;  // the GKE cluster location; empty when the target has no node pools
  bool vanished = false; // the directory is gone; owned resources remain
  TargetStatus status = TargetStatus::kPlanned;
  std::vector<std::string> errors;    // why blocked or refused (manifest errors as file:line:col: …)
  std::vector<std::string> warnings;  // e.g. prune: false kept undeclared pools
  manifest::ReplaceStrategy replace_strategy = manifest::ReplaceStrategy::kDeleteBeforeCreate;
  // Execution order: dependencies first; deletes of slices from the highest index down.
  std::vector<Action> actions;
  int owned_chips = 0;   // chips in owned live resources before the plan
  int delete_chips = 0;  // chips the plan's deletes destroy (the mass-delete guard's numerator)
  int max_delete_percent = 50;
  std::vector<WorkloadOwnedPool> workload_pools;  // by name; never acted on by the plan
  std::vector<ReservationUse> reservations;  // by owner project, zone and name
  // Creates and growths a reservation has no room for: shown, never applied
  // (their `reason` says why, with the numbers). The target's other actions go on.
  std::vector<Action> blocked_actions;
  std::vector<SliceRung> ladder;  // slices of pools with a capacity ladder, by pool

  bool executable() const { return status == TargetStatus::kPlanned; }
};

struct Summary {
  int create = 0;
  int update = 0;  // updates and resizes
  int replace = 0;
  int remove = 0;  // deletes
  int adopt = 0;   // adopt_only updates (not in `update`)
  int noop = 0;
  int chips_created = 0;
  int chips_destroyed = 0;
  int chips_possible = 0;  // of chips_created: autoscaled pools' (possible capacity)
  bool operator==(const Summary&) const = default;
};

struct Plan {
  int schema_version = kPlanSchemaVersion;
  std::string tool_version;  // tpu-provisioner version that computed it
  std::string created_at;    // RFC 3339, UTC; empty in tests
  // Fingerprint of each refreshed project's live state (fingerprint.h).
  std::map<std::string, std::string> live_fingerprints;
  std::vector<TargetPlan> targets;  // sorted by key
  std::vector<std::string> errors;  // errors outside any target (repo-level manifest errors)

  // Counts over executable targets' actions (refused/blocked targets excluded).
  Summary Summarize() const;
  bool HasChanges() const;  // any executable action that is not a noop
  // HasChanges(), and every change is an adoption (Action::adopt_only): the
  // plan reports "No changes" but apply still writes the ownership labels.
  bool OnlyAdoptions() const;
  bool HasErrors() const;   // repo errors, any blocked or refused target, or an action a reservation blocks
};

const char* ActionKindName(ActionKind k);      // "create", "update", …
const char* ResourceKindName(ResourceKind k);  // "nodePool", "workloadPolicy", …
const char* UpdateCallName(UpdateCall c);      // "updateNodePool", "setSize", …
const char* TargetStatusName(TargetStatus s);  // "planned", "blocked", …
// Inverses; false when the name is unknown.
bool ParseActionKind(const std::string& s, ActionKind* out);
bool ParseResourceKind(const std::string& s, ResourceKind* out);
bool ParseUpdateCall(const std::string& s, UpdateCall* out);
bool ParseTargetStatus(const std::string& s, TargetStatus* out);

}  // namespace tpu::plan
