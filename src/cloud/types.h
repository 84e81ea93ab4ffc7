// The cloud resources tpu-provisioner manages, as typed values: GKE node pools,
// Compute workload policies, instance templates and managed instance groups,
// and the long-running operations that change them. The same types describe
// live state (parsed from API responses by the clients) and desired state (built
// by plan from manifests); optional fields are "not said". Wire (de)serialisation
// lives in gke_wire.* and compute_wire.*; nothing here knows HTTP.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tpu::cloud {

using StringMap = std::map<std::string, std::string>;

// Ownership markers (docs/architecture.md, "Plan rules").
inline constexpr const char* kManagedLabel = "tpu-provisioner-managed";     // = "true"
inline constexpr const char* kTargetHashLabel = "tpu-provisioner-target";   // hash of project/cluster
inline constexpr const char* kComputeMarker = "managed-by=tpu-provisioner"; // in Compute `description`

struct NodeTaint {
  std::string key;
  std::string value;
  std::string effect;  // GKE spelling: NO_SCHEDULE | PREFER_NO_SCHEDULE | NO_EXECUTE
  bool operator==(const NodeTaint&) const = default;
};

struct ReservationAffinity {
  std::string consume_reservation_type;  // NO_RESERVATION | ANY_RESERVATION | SPECIFIC_RESERVATION
  std::string key;                       // compute.googleapis.com/reservation-name
  std::vector<std::string> values;       // reservation names (or projects/P/reservations/R)
  bool operator==(const ReservationAffinity&) const = default;
};

struct PlacementPolicy {
  std::string type;          // COMPACT, or empty (tpu7x pools report no type)
  std::string tpu_topology;  // "4x4x4"
  std::string policy_name;   // workload policy (tpu7x)
  bool operator==(const PlacementPolicy&) const = default;
};

struct NodePoolAutoscaling {
  bool enabled = false;
  int min_node_count = 0;   // per zone (minNodeCount), or totalMinNodeCount when only that is set
  int max_node_count = 0;
  std::string location_policy;  // ANY | BALANCED | "" (not said)
  bool operator==(const NodePoolAutoscaling&) const = default;
};

struct NodeManagement {
  bool auto_repair = false;
  bool auto_upgrade = false;
  bool operator==(const NodeManagement&) const = default;
};

// NodeConfig.secondaryBootDisks[]: a disk image attached to each node, e.g.
// mode CONTAINER_IMAGE_CACHE to preload container images.
struct SecondaryBootDisk {
  std::string disk_image;  // "projects/P/global/images/I"
  std::string mode;        // CONTAINER_IMAGE_CACHE | MODE_UNSPECIFIED
  bool operator==(const SecondaryBootDisk&) const = default;
};

// NodeNetworkConfig.additionalNodeNetworkConfigs[]: another VPC's NIC per node.
struct AdditionalNodeNetwork {
  std::string network;
  std::string subnetwork;
  bool operator==(const AdditionalNodeNetwork&) const = default;
};

// A GKE node pool (container.v1 NodePool, the fields we read or write).
struct NodePool {
  std::string name;
  // config
  std::string machine_type;
  std::optional<int> disk_size_gb;
  std::optional<std::string> disk_type;
  std::optional<std::string> image_type;
  std::optional<std::string> service_account;
  std::optional<std::vector<std::string>> oauth_scopes;
  std::optional<StringMap> labels;           // Kubernetes node labels
  std::optional<std::vector<NodeTaint>> taints;
  std::optional<StringMap> resource_labels;  // GCE labels; ownership marker lives here
  std::optional<std::vector<std::string>> tags;
  std::optional<StringMap> metadata;
  bool spot = false;
  std::optional<ReservationAffinity> reservation_affinity;
  bool flex_start = false;
  std::optional<bool> secure_boot;           // shieldedInstanceConfig.enableSecureBoot
  std::optional<bool> integrity_monitoring;  // shieldedInstanceConfig.enableIntegrityMonitoring
  std::optional<std::string> boot_disk_kms_key;  // bootDiskKmsKey: projects/P/locations/L/keyRings/R/cryptoKeys/K
  std::vector<SecondaryBootDisk> secondary_boot_disks;
  // NodePool (not NodeConfig) fields.
  std::optional<int> max_pods_per_node;      // maxPodsConstraint.maxPodsPerNode
  std::vector<AdditionalNodeNetwork> additional_node_networks;  // networkConfig.additionalNodeNetworkConfigs
  std::optional<PlacementPolicy> placement_policy;
  int node_count = 0;  // initialNodeCount on create; current size when live
  std::optional<NodePoolAutoscaling> autoscaling;
  std::optional<NodeManagement> management;
  std::optional<std::string> version;
  std::vector<std::string> locations;  // node zones
  // live only
  std::string status;  // PROVISIONING | RUNNING | RUNNING_WITH_ERROR | RECONCILING | STOPPING | ERROR
  std::string status_message;
  std::string self_link;
  std::vector<std::string> instance_group_urls;
  bool operator==(const NodePool&) const = default;
};

// An in-place node pool update (PUT …/nodePools/N, UpdateNodePoolRequest).
// Each set field replaces the whole live set (labels, taints, resourceLabels
// and tags go on the wire as wrapper objects); unset fields are left alone.
// diskSizeGb, diskType and locations migrate the nodes (a rolling update);
// `locations` belongs in a call of its own (the proto's comment on it).
struct NodePoolUpdate {
  std::optional<StringMap> labels;
  std::optional<std::vector<NodeTaint>> taints;
  std::optional<StringMap> resource_labels;
  std::optional<std::vector<std::string>> tags;
  std::optional<std::string> node_version;  // nodeVersion
  std::optional<std::string> image_type;
  std::optional<int> disk_size_gb;
  std::optional<std::string> disk_type;
  std::optional<std::vector<std::string>> locations;
  bool empty() const {
    return !labels && !taints && !resource_labels && !tags && !node_version && !image_type &&
           !disk_size_gb && !disk_type && !locations;
  }
};

// A GKE cluster and its embedded node pools, as one list call returns them.
struct Cluster {
  std::string project;
  std::string name;
  std::string location;  // region or zone
  std::string status;
  std::string self_link;
  std::vector<NodePool> node_pools;
  // releaseChannel.channel: REGULAR, RAPID, STABLE, EXTENDED; "" when the
  // cluster is in none (a channel refuses management.autoUpgrade false).
  std::string release_channel;
  bool operator==(const Cluster&) const = default;
};

// A Compute workload policy (resourcePolicies with workloadPolicy), regional.
struct WorkloadPolicy {
  std::string name;
  std::string region;
  std::string type;                  // HIGH_THROUGHPUT
  std::string accelerator_topology;  // "4x4x4"
  std::string description;           // carries kComputeMarker when owned
  std::string status;                // READY, CREATING, DELETING …
  std::string self_link;
  std::string accelerator_topology_mode;  // AUTO_CONNECT | PROVISION_ONLY | "" (the API's default, AUTO_CONNECT)
  bool operator==(const WorkloadPolicy&) const = default;
};

// A Compute instance template (global). Immutable once created.
struct InstanceTemplate {
  std::string name;
  std::string description;
  std::string machine_type;
  std::string provisioning_model;  // STANDARD | SPOT | RESERVATION_BOUND
  std::string reservation;         // specific reservation name, if any
  std::string source_image;
  std::string subnetwork;
  std::optional<int> boot_disk_size_gb;
  std::optional<std::string> disk_type;
  std::vector<std::string> service_accounts;
  std::vector<std::string> network_tags;
  StringMap metadata;
  std::string self_link;
  std::string on_host_maintenance;          // TERMINATE for TPU VMs (they cannot live-migrate)
  std::string instance_termination_action;  // DELETE (reservation-bound), STOP (spot), ""
  bool operator==(const InstanceTemplate&) const = default;
};

// InstanceGroupManager.currentActions: how many of the group's instances
// are in each action now (the counts a caller reports while a group settles).
struct MigCurrentActions {
  int creating = 0;
  int creating_without_retries = 0;
  int deleting = 0;
  int none = 0;
  int recreating = 0;
  int verifying = 0;
  bool operator==(const MigCurrentActions&) const = default;
};

// A zonal managed instance group.
struct InstanceGroupManager {
  std::string name;
  std::string zone;
  std::string description;
  std::string instance_template;   // URL
  std::string base_instance_name;
  int target_size = 0;
  std::string target_size_policy_mode;  // BULK | INDIVIDUAL
  std::string workload_policy;     // URL, resourcePolicies.workloadPolicy (tpu7x slices)
  std::string status;              // isStable etc. summarised: STABLE | UPDATING
  std::string self_link;
  MigCurrentActions current_actions;  // live only
  bool operator==(const InstanceGroupManager&) const = default;
};

// One instance of a managed instance group (listManagedInstances).
struct ManagedInstance {
  std::string name;             // instance name
  std::string instance;         // URL
  std::string instance_status;  // PROVISIONING, STAGING, RUNNING, …; "" when none yet
  std::string current_action;   // CREATING, NONE, DELETING, …
  std::vector<std::string> errors;  // lastAttempt.errors: "CODE: message"
};

// A Compute instance, the fields we read. Metadata values may be secrets
// (a bootstrap token): never log them.
struct Instance {
  std::string name, zone, status;
  std::string metadata_fingerprint;
  std::vector<std::pair<std::string, std::string>> metadata;  // items, in order
};

// A Compute zonal reservation of specific VMs (compute.v1 Reservation with a
// specificReservation), the fields a plan needs to place pools and MIGs in it.
// It lives in its owner `project`; a shared one is consumed from other
// projects as projects/OWNER/reservations/NAME.
struct Reservation {
  std::string name;
  std::string zone;
  std::string project;                // owner (from selfLink)
  int count = 0;                      // specificReservation.count: VMs reserved
  int in_use_count = 0;               // specificReservation.inUseCount: VMs in use
  std::string machine_type;           // specificReservation.instanceProperties.machineType
  bool specific_reservation_required = false;  // only VMs naming it may use it
  std::string share_type;             // LOCAL | SPECIFIC_PROJECTS | ORGANIZATION | "" (not said)
  std::vector<std::string> shared_with;  // shareSettings.projectMap keys (SPECIFIC_PROJECTS)
  std::string status;                 // READY, CREATING, UPDATING, DELETING
  std::string deployment_type;        // DENSE | "" (not said)
  int block_count = 0;                // resourceStatus.reservationBlockCount, 0 = not said
  std::string self_link;
  bool operator==(const Reservation&) const = default;
  int free_count() const { return count > in_use_count ? count - in_use_count : 0; }
  // "projects/OWNER/reservations/NAME", the form another project names it by.
  std::string shared_name() const { return "projects/" + project + "/reservations/" + name; }
};

// A long-running operation, GKE or Compute, normalised.
struct Operation {
  enum class Api { kGke, kCompute };
  Api api = Api::kGke;
  std::string name;
  std::string project;
  std::string location;     // GKE location, or Compute zone/region; empty = global
  std::string scope;        // Compute: "zones" | "regions" | "global"; GKE: "locations"
  std::string operation_type;  // CREATE_NODE_POOL, insert, delete, resize …
  std::string status;       // PENDING | RUNNING | DONE | ABORTING
  std::string target_link;  // the resource it acts on
  std::string self_link;
  // Set when DONE with an error.
  int error_code = 0;            // google.rpc code (GKE) or HTTP status (Compute)
  std::string error_message;
  std::string error_reason;      // e.g. GCE_STOCKOUT, ZONE_RESOURCE_POOL_EXHAUSTED
  bool done() const { return status == "DONE"; }
  bool failed() const { return done() && (error_code != 0 || !error_message.empty()); }
  bool operator==(const Operation&) const = default;
};

// Everything one refresh of a project saw.
struct ProjectState {
  std::string project;
  std::vector<Cluster> clusters;
  std::vector<WorkloadPolicy> workload_policies;
  std::vector<InstanceTemplate> instance_templates;
  std::vector<InstanceGroupManager> instance_group_managers;
  std::vector<Operation> running_operations;  // not DONE, GKE node-pool ops and Compute ops
  // With RefreshOptions::include_reservations: the project's own reservations,
  // then those of other projects its pools or templates name
  // (projects/OWNER/reservations/N), with project = OWNER.
  std::vector<Reservation> reservations;
};

struct LiveState {
  std::map<std::string, ProjectState> projects;  // by project id
};

}  // namespace tpu::cloud
