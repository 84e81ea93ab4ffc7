// Desired state as the manifests declare it: typed values with defaults applied
// and the slice shape resolved from the catalog (README, "Manifest reference"). Produced by the
// loader; read by plan. Plain values: no YAML, no git, no HTTP.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"

namespace tpu::manifest {

// Where a value came from. `file` is relative to the repo root; line and column
// are 1-based (0 when the error is about a whole file or directory).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  bool operator==(const SourceLocation&) const = default;
};

// One manifest error: "file:line:column: field.path: what was expected".
struct Error {
  SourceLocation where;
  std::string field;    // e.g. "spec.topology"; empty for file-level errors
  std::string message;  // what is wrong and what was expected
  std::string ToString() const;
  bool operator==(const Error&) const = default;
};

using StringMap = std::map<std::string, std::string>;

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // Kubernetes spelling: NoSchedule | PreferNoSchedule | NoExecute
  bool operator==(const Taint&) const = default;
};

enum class CapacityType { kOnDemand, kSpot, kReservation, kFlexStart };

struct Capacity {
  CapacityType type = CapacityType::kOnDemand;
  std::string reservation;          // kReservation only
  std::string reservation_project;  // empty = the target's project
  bool operator==(const Capacity&) const = default;
};

// "onDemand", "spot", "reservation <name>" (with its owner when it has one), "flexStart".
std::string CapacityName(const Capacity& c);

// Fields left unset in the manifest stay nullopt, so plan compares only what
// the manifest sets (docs/architecture.md, "Plan rules").
struct NodeConfig {
  std::optional<StringMap> labels;
  std::optional<std::vector<Taint>> taints;
  std::optional<StringMap> resource_labels;
  std::optional<std::string> service_account;
  std::optional<std::vector<std::string>> oauth_scopes;
  std::optional<int> disk_size_gb;
  std::optional<std::string> disk_type;
  std::optional<std::string> image_type;
  std::optional<std::vector<std::string>> tags;
  std::optional<StringMap> metadata;
  bool operator==(const NodeConfig&) const = default;
};

// spec.autoscaling. Single-host pools: min..max nodes. Multi-host pools: the
// whole slice, between 0 and its VM count (max is the VM count).
struct Autoscaling {
  bool enabled = true;
  int min_node_count = 0;
  int max_node_count = 0;
  bool operator==(const Autoscaling&) const = default;
};

// spec.management. A field left out is not sent: GKE's default applies
// (auto-upgrade and auto-repair on). A cluster in a release channel refuses
// autoUpgrade false; that is checked at plan time, when the channel is known,
// at `auto_upgrade_at`.
struct Management {
  std::optional<bool> auto_repair;
  std::optional<bool> auto_upgrade;
  SourceLocation auto_upgrade_at;  // the autoUpgrade key (file stamped with the pool's)
  bool operator==(const Management&) const = default;
};

// The tpu-provisioner.io/* annotations.
struct Annotations {
  bool prevent_destroy = false;  // prevent-destroy: "true"
  bool abandon = false;          // deletion-policy: abandon
  bool adopt = false;            // adopt: "true"
  bool operator==(const Annotations&) const = default;
};

// kind: TPUNodePool. One GKE node pool per slice, named `<name>-<i>`.
struct TPUNodePool {
  std::string name;
  SourceLocation where;  // the document's `kind:` line
  std::string accelerator;     // canonical GKE label, aliases resolved
  catalog::Shape shape;        // topology, machine type, chips and VMs per slice
  int slices = 1;
  std::string location;        // zone, e.g. us-central2-b
  Capacity capacity;
  // spec.capacity written as a list of two or more: the fallback ladder, best
  // first (docs/capacity.md, "Fallback ladder"); `capacity` is its first rung.
  // Empty when one capacity type is written, as before ladders.
  std::vector<Capacity> ladder;
  // Nodes per slice: shape.vms, or spec.nodeCount (single-host). For an
  // autoscaled pool, the most it scales to: its chips are possible capacity.
  int node_count = 0;
  bool node_count_set = false; // spec.nodeCount was written
  std::optional<Autoscaling> autoscaling;  // flex-start pools always have one (from 0)
  std::string workload_policy;  // v7x multi-host: the Compute workload policy's name
  NodeConfig node_config;
  std::optional<Management> management;  // unset: GKE's defaults
  std::optional<std::string> version;
  Annotations annotations;

  // "<name>-<index>"; slices are numbered from 0.
  std::string PoolName(int index) const { return name + "-" + std::to_string(index); }
  // Its nodes come and go with the autoscaler (a multi-host one as a whole).
  bool autoscaled() const { return autoscaling && autoscaling->enabled; }
  bool operator==(const TPUNodePool&) const = default;
};

enum class ProvisioningModel { kStandard, kSpot, kReservationBound };
enum class TargetSizePolicyMode { kIndividual, kBulk };

// kind: TPUNodeGroup (tpu.google.com/v1alpha1, the tpu-operator's schema): a
// workload policy, an instance template and a managed instance group.
struct TPUNodeGroup {
  std::string name;
  SourceLocation where;
  std::string project;        // spec.project; must equal the directory's project
  std::string node_location;  // zone
  int node_count = 0;
  std::optional<int> min_node_count;
  std::string topology;
  std::optional<catalog::Shape> shape;  // when the machine type is known
  // How the slice's chips are connected. STATIC, the only value the
  // tpu-operator accepts (and the default here), leaves the workload policy's
  // acceleratorTopologyMode to the API's default, AUTO_CONNECT.
  std::string accelerator_connection_mode = "STATIC";
  TargetSizePolicyMode target_size_policy_mode = TargetSizePolicyMode::kIndividual;
  // instanceConfig, or a template the user brings (instanceTemplateURI).
  struct InstanceConfig {
    std::string machine_type;
    ProvisioningModel provisioning_model = ProvisioningModel::kStandard;
    std::string reservation;
    std::string image;
    std::string subnetwork;
    std::optional<int> boot_disk_size_gb;
    std::optional<std::string> disk_type;
    std::vector<std::string> service_accounts;
    std::vector<std::string> network_tags;
    StringMap metadata;
    bool operator==(const InstanceConfig&) const = default;
  };
  std::optional<InstanceConfig> instance_config;
  std::string instance_template_uri;
  struct BootstrapKubernetes {
    std::string version;
    std::string control_plane_ip;
    bool operator==(const BootstrapKubernetes&) const = default;
  };
  std::optional<BootstrapKubernetes> bootstrap_kubernetes;
  Annotations annotations;
  bool operator==(const TPUNodeGroup&) const = default;
};

enum class ReplaceStrategy { kDeleteBeforeCreate, kCreateBeforeDelete };

// spec.kueue of a Cluster (docs/architecture.md, "Beside Kueue"): where the declared capacity becomes quota.
struct KueuePolicy {
  std::string cluster_queue;      // exactly one of cluster_queue and cohort is set
  std::string cohort;
  bool wait_for_workloads = true;  // wait for admitted workloads before shrinking
  bool hold_queue = false;         // hold the queue (stopPolicy: Hold) while waiting
  bool ready_mode = false;         // mode: ready (quota follows Ready nodes), else declared
  std::string flavor_name;         // ResourceFlavor name template; "" = the default
  std::string scale_down_timeout;  // "30m"; "" = the default (1h)
  bool operator==(const KueuePolicy&) const = default;
};

// spec.demand of a Cluster (docs/architecture.md, "Beside Kueue"): what may be provisioned for JobSets'
// unschedulable leader pods (node pools owned by the workload, not by git).
struct DemandPolicy {
  bool enabled = true;
  std::vector<std::string> accelerators;  // GKE accelerator labels (aliases resolved); required
  std::vector<std::string> topologies;    // allowed topologies; empty = any valid one
  std::vector<CapacityType> capacity_types = {CapacityType::kOnDemand};
  int max_chips = 0;                      // in demand-driven pools, whole cluster
  std::optional<int> max_chips_per_namespace;
  int grace_period_seconds = 300;         // gracePeriod: wait after a JobSet finishes
  std::string zone;                       // node zone; "" = the cluster's location when a zone
  std::string service_account;            // node service account; "" = GKE's default
  StringMap node_labels;                  // extra Kubernetes node labels
  // Node options, as the GKE TPU Provisioner offers them (its environment
  // variables there, per target here).
  std::vector<std::string> allowed_service_accounts;  // a pod's annotation may pick one
  std::vector<std::pair<std::string, std::string>> additional_node_networks;  // network, subnetwork
  std::vector<std::string> tags;          // network tags
  int max_pods_per_node = 15;             // 0 = GKE's default
  bool secure_boot = true;
  std::string secondary_boot_disk;        // image for CONTAINER_IMAGE_CACHE; "" = none
  std::string disk_type;                  // "" = GKE's default
  std::string boot_disk_kms_key;          // "" = Google-managed
  std::vector<std::string> pod_labels_to_nodes;
  std::string tpu_resource = "google.com/tpu";
  bool operator==(const DemandPolicy&) const = default;
};

// spec.drift: what the daemon does about changes made behind git's back.
enum class DriftMode {
  kCorrect,  // puts live state back as git says (the default)
  kWarn,     // reports the drift, never acts on it; commits still apply
};

// spec.mode: what the daemon may do at all.
enum class TargetMode {
  kNormal,
  kCleanupOnly,  // deletes, and repairs of ERROR pools only: nothing created or grown
};

// One of spec.changeWindows: when mutating actions may run. Either a cron
// schedule (5 fields, in `time_zone`) that opens the window for `duration`,
// or a fixed RFC 3339 range [start, end).
struct ChangeWindow {
  bool allow = true;         // kind: allow | deny
  std::string schedule;      // "0 22 * * 1-5"; empty for a range
  int64_t duration_seconds = 0;
  std::string time_zone = "UTC";  // IANA name (/usr/share/zoneinfo)
  std::string start, end;    // RFC 3339, a range window
  SourceLocation where;
  bool operator==(const ChangeWindow&) const = default;
};

// kind: Cluster (cluster.yaml, optional). Defaults as README, "Manifest reference".
struct ClusterPolicy {
  std::optional<std::string> location;  // found by listing when absent
  bool prune = true;
  int max_delete_percent = 50;
  ReplaceStrategy replace_strategy = ReplaceStrategy::kDeleteBeforeCreate;
  bool suspend = false;
  std::optional<KueuePolicy> kueue;
  std::optional<DemandPolicy> demand;
  DriftMode drift = DriftMode::kCorrect;
  TargetMode mode = TargetMode::kNormal;
  std::vector<ChangeWindow> change_windows;
  bool declared = false;  // a cluster.yaml exists
  SourceLocation where;
  bool operator==(const ClusterPolicy&) const = default;
};

// A directory deploy/<project>/<cluster>/ and everything declared in it.
struct Target {
  std::string project;
  std::string cluster;
  std::string dir;  // "deploy/<project>/<cluster>"
  ClusterPolicy policy;
  std::vector<TPUNodePool> pools;
  std::vector<TPUNodeGroup> groups;
  std::vector<Error> errors;  // any error blocks the whole target
  bool blocked() const { return !errors.empty(); }
  std::string Key() const { return project + "/" + cluster; }
  bool operator==(const Target&) const = default;
};

// Everything one load of a repository produced.
struct Repo {
  std::vector<Target> targets;  // sorted by Key()
  std::vector<Error> errors;    // errors that belong to no target (files outside the layout)
  // All errors, target errors included, in file order.
  std::vector<Error> AllErrors() const;
  bool operator==(const Repo&) const = default;
};

}  // namespace tpu::manifest
