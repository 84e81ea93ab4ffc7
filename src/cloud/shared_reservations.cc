// The foreign reservations a project consumes (see shared_reservations.h).
#include "cloud/shared_reservations.h"

#include <set>

#include "cloud/compute_wire.h"  // LastSegment

namespace tpu::cloud {

std::optional<ReservationRef> ParseSharedReservationName(const std::string& value) {
  // ReservationAffinity.values (compute.proto): a name in the same project, or
  // "projects/different-project/reservations/some-reservation-name".
  const std::string prefix = "projects/", mid = "/reservations/";
  if (value.rfind(prefix, 0) != 0) return std::nullopt;
  const size_t at = value.find(mid, prefix.size());
  if (at == std::string::npos || at == prefix.size()) return std::nullopt;
  ReservationRef ref;
  ref.project = value.substr(prefix.size(), at - prefix.size());
  ref.name = value.substr(at + mid.size());
  if (ref.name.empty() || ref.name.find('/') != std::string::npos) return std::nullopt;
  return ref;
}

std::vector<ReservationRef> ForeignReservationRefs(const ProjectState& state) {
  std::set<ReservationRef> refs;
  auto add = [&](const std::string& value, const std::string& zone) {
    auto ref = ParseSharedReservationName(value);
    if (!ref || ref->project == state.project || zone.empty()) return;
    ref->zone = zone;
    refs.insert(*ref);
  };
  for (const auto& cluster : state.clusters) {
    for (const auto& pool : cluster.node_pools) {
      const auto& ra = pool.reservation_affinity;
      if (!ra || ra->consume_reservation_type != "SPECIFIC_RESERVATION" || ra->values.empty()) continue;
      // A zonal cluster's pools may leave locations out: they are in its zone.
      add(ra->values.front(), pool.locations.empty() ? cluster.location : pool.locations.front());
    }
  }
  for (const auto& tmpl : state.instance_templates) {
    if (tmpl.reservation.empty()) continue;
    for (const auto& mig : state.instance_group_managers)
      if (LastSegment(mig.instance_template) == tmpl.name) add(tmpl.reservation, mig.zone);
  }
  return {refs.begin(), refs.end()};
}

}  // namespace tpu::cloud
