// ProvisioningRequests as bookings; see bookings.h.
#include "kueue/bookings.h"

#include <algorithm>
#include <map>
#include <set>

#include "kueue/flex_start.h"

namespace tpu::kueue {
namespace {

// The status of condition `type` ("True", "False", "Unknown"; "" when absent) and its reason.
std::string ConditionOf(const json& obj, const std::string& type, std::string* reason = nullptr) {
  if (!obj.contains("status") || !obj["status"].contains("conditions")) return "";
  for (const auto& c : obj["status"]["conditions"]) {
    if (c.value("type", "") != type) continue;
    if (reason) *reason = c.value("reason", "");
    return c.value("status", "");
  }
  return "";
}

}  // namespace

BookingReport ParseBookings(const std::vector<json>& requests, const std::vector<json>& nodes) {
  std::map<std::string, std::set<std::string>> pools_by_request;
  for (const auto& node : nodes) {
    if (!node.contains("metadata") || !node["metadata"].contains("labels")) continue;
    const json& labels = node["metadata"]["labels"];
    const std::string rr = labels.value(kProvisioningRequestNodeLabel, "");
    const std::string pool = labels.value("cloud.google.com/gke-nodepool", "");
    if (!rr.empty() && !pool.empty()) pools_by_request[rr].insert(pool);
  }
  BookingReport out;
  out.served = true;
  for (const auto& pr : requests) {
    if (pr.value("spec", json::object()).value("provisioningClassName", "") != kQueuedProvisioningClass) continue;
    Booking b;
    b.name = pr["metadata"].value("namespace", "") + "/" + pr["metadata"].value("name", "");
    if (pr.contains("status") && pr["status"].contains("provisioningClassDetails"))
      b.resize_request = pr["status"]["provisioningClassDetails"].value("ResizeRequestName", "");
    if (auto it = pools_by_request.find(b.resize_request); !b.resize_request.empty() && it != pools_by_request.end())
      b.node_pools.assign(it->second.begin(), it->second.end());
    if (ConditionOf(pr, "CapacityRevoked", &b.reason) == "True") {
      out.revoked.push_back(std::move(b));
    } else if (ConditionOf(pr, "BookingExpired", &b.reason) == "True") {
      out.expired.push_back(std::move(b));
    } else if (ConditionOf(pr, "Failed") != "True" && ConditionOf(pr, "Provisioned", &b.reason) == "True") {
      out.live.push_back(std::move(b));
    }
  }
  return out;
}

Result<BookingReport> ReadBookings(kube::KubeClient& client) {
  const kube::ResourceRef& ref = kube::resources::kProvisioningRequests;
  auto versions = client.ServedVersions(ref.group);
  if (!versions.ok()) return versions.status().WithContext("bookings");
  if (std::find(versions->begin(), versions->end(), ref.version) == versions->end()) return BookingReport{};
  auto requests = client.List(ref, "", {});
  if (!requests.ok()) return requests.status().WithContext("bookings: listing ProvisioningRequests");
  kube::ListOptions booked;
  booked.label_selector = kProvisioningRequestNodeLabel;
  auto nodes = client.List(kube::resources::kNodes, "", booked);
  if (!nodes.ok()) return nodes.status().WithContext("bookings: listing nodes");
  return ParseBookings(requests->items, nodes->items);
}

std::vector<std::string> PoolsHeldByBookings(const BookingReport& report, const std::vector<std::string>& flex_pools,
                                             std::string* why) {
  std::vector<std::string> held;
  std::string reasons;
  for (const auto& pool : flex_pools) {
    for (const auto& b : report.live) {
      const bool unknown = b.node_pools.empty();
      if (!unknown && std::find(b.node_pools.begin(), b.node_pools.end(), pool) == b.node_pools.end()) continue;
      held.push_back(pool);
      reasons += (reasons.empty() ? "" : "; ") + b.name +
                 (unknown ? " is a live booking whose nodes are not found (it may be on " + pool + ")"
                          : " is a live booking on " + pool);
      break;
    }
  }
  if (why) *why = reasons;
  return held;
}

}  // namespace tpu::kueue
