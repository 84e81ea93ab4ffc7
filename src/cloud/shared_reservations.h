// Which reservations of other projects a project's live resources consume:
// GKE node pools with reservationAffinity SPECIFIC_RESERVATION naming
// projects/OWNER/reservations/N, and instance templates whose reservation is
// such a name. A project's aggregated reservation list holds only the ones
// it owns, so refresh reads these from their owner (refresh.h).
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <vector>

#include "cloud/types.h"

namespace tpu::cloud {

struct ReservationRef {
  std::string project;  // owner
  std::string zone;
  std::string name;
  auto operator<=>(const ReservationRef&) const = default;
};

// "projects/P/reservations/N" → {P, "", N}; nothing for a bare name.
std::optional<ReservationRef> ParseSharedReservationName(const std::string& value);

// The distinct reservations owned by a project other than state.project that
// state's pools and templates name, with the zone they are consumed in (a
// shared reservation is used in its own zone: the pool's first node zone, or
// the zone of a managed instance group using the template). A template no
// group uses has no zone and is left out.
std::vector<ReservationRef> ForeignReservationRefs(const ProjectState& state);

}  // namespace tpu::cloud
