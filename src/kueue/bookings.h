// DWS bookings, read from the cluster autoscaler's ProvisioningRequests
// (autoscaling.x-k8s.io/v1, which Kueue creates in the workloads'
// namespaces): which are live (Provisioned, not BookingExpired, not
// CapacityRevoked, not Failed), which expired or were revoked (for /status),
// and which node pools a live booking holds. GKE labels the nodes of a booking
// autoscaling.gke.io/provisioning-request=<ResizeRequestName>, the name the
// request's status.provisioningClassDetails gives: from those Nodes' node-pool
// labels we learn its pools. A live booking whose nodes we cannot find holds
// every flex-start pool (we cannot tell which is its), so deletes wait.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "kube/client.h"

namespace tpu::kueue {

struct Booking {
  std::string name;             // "namespace/name" of the ProvisioningRequest
  std::string resize_request;   // provisioningClassDetails.ResizeRequestName
  std::vector<std::string> node_pools;  // of its nodes; empty: not found
  std::string reason;           // of the condition that put it in its list
};

struct BookingReport {
  bool served = false;  // autoscaling.x-k8s.io serves ProvisioningRequests
  std::vector<Booking> live;
  std::vector<Booking> expired;  // BookingExpired
  std::vector<Booking> revoked;  // CapacityRevoked
};

// Only requests of class queued-provisioning.gke.io count.
BookingReport ParseBookings(const std::vector<nlohmann::json>& requests, const std::vector<nlohmann::json>& nodes);

// Lists ProvisioningRequests in every namespace and the Nodes of bookings;
// an empty report (served=false) when the cluster does not serve them.
Result<BookingReport> ReadBookings(kube::KubeClient& client);

// Of `flex_pools` (flex-start pools about to be deleted), those a live
// booking holds, and why ("team/job-a holds dws-0"); empty: none.
std::vector<std::string> PoolsHeldByBookings(const BookingReport& report, const std::vector<std::string>& flex_pools,
                                             std::string* why);

}  // namespace tpu::kueue
