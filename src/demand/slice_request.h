// A leader pod's request → the node pool that serves it, checked against the
// cluster's git policy (Cluster.spec.demand). Pure: no I/O.
//
// The machine type comes from the pod's google.com/tpu request — the chips of
// one VM — so a v6e 2x4 asked with 8 chips per pod is one ct6e-standard-8t VM,
// and with 4 chips per pod two ct6e-standard-4t VMs (the seed provisioner
// derived the node count from 4 chips per VM and got 8t shapes wrong). The node
// count is the topology's chips over the chips per VM.
#pragma once

#include <string>

#include "base/status.h"
#include "catalog/catalog.h"
#include "cloud/types.h"
#include "demand/workload.h"
#include "manifest/types.h"

namespace tpu::demand {

// The GKE cluster the pools go into.
struct ClusterRef {
  std::string project;
  std::string location;  // the GKE cluster's location (region or zone)
  std::string cluster;
  std::string release_channel;  // "" when the cluster is in none
  std::string Key() const { return project + "/" + cluster; }
};

struct SliceRequest {
  cloud::NodePool pool;  // the create body, labels and ownership included
  catalog::Shape shape;
  int chips = 0;
  int hosts = 0;
  std::string spec;  // kPoolSpecLabel: hash of shape, capacity and passed-through selectors
  // tpu7x multi-host: the Compute workload policy the pool's placement names.
  std::optional<cloud::WorkloadPolicy> workload_policy;
};

// An error Status says, in one line for a Kubernetes Event, why the request
// is refused (not allowed by the policy, or not a valid slice).
Result<SliceRequest> BuildSlice(const manifest::DemandPolicy& policy, const ClusterRef& cluster,
                                const LeaderPod& leader);

// The reservationAffinity value: "N", or "projects/P/reservations/N" for a
// shared reservation named with cloud.google.com/reservation-project.
std::string ReservationValue(const LeaderPod& leader);

// The node zone: policy.zone, else the cluster's location when it is a zone.
std::string NodeZone(const manifest::DemandPolicy& policy, const ClusterRef& cluster);

}  // namespace tpu::demand
