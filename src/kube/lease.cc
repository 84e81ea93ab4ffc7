// Lease objects: see lease.h.
#include "kube/lease.h"

#include "kube/timestamps.h"

namespace tpu::kube {

json LeaseObject(const std::string& ns, const std::string& name, const std::string& holder,
                 std::chrono::seconds duration, WallTime now, const json* current, bool transition) {
  const std::string stamp = FormatMicroTime(now);
  const json cur = current ? current->value("spec", json::object()) : json::object();
  json spec = {{"holderIdentity", holder},
               {"leaseDurationSeconds", duration.count()},
               {"renewTime", stamp},
               {"acquireTime", transition || !current ? stamp : cur.value("acquireTime", stamp)},
               {"leaseTransitions", cur.value("leaseTransitions", 0) + (transition && current ? 1 : 0)}};
  json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata", {{"name", name}, {"namespace", ns}}},
                {"spec", spec}};
  if (current) lease["metadata"]["resourceVersion"] = (*current)["metadata"]["resourceVersion"];
  return lease;
}

std::string LeaseHolder(const json& lease) {
  return lease.value("spec", json::object()).value("holderIdentity", "");
}

std::string LeaseRecord(const json& lease) {
  return LeaseHolder(lease) + "|" + lease.value("spec", json::object()).value("renewTime", "");
}

std::chrono::seconds LeaseDuration(const json& lease) {
  return std::chrono::seconds(lease.value("spec", json::object()).value("leaseDurationSeconds", 15));
}

}  // namespace tpu::kube
