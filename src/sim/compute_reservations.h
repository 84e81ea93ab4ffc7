// Compute reservations (zones/Z/reservations[/N], aggregated/reservations),
// served read-only from the capacity model (cloud_capacity.h): a reservation
// declared there with a machine type exists in its owner project as a
// compute#reservation whose specificReservation.count and inUseCount are its
// chips and the chips pools and MIG instances hold, over its machine's chips
// per VM. Also the one reading of a reservationAffinity that GKE node pools
// and instance templates share. docs/emulator.md, "Compute: reservations".
#pragma once

#include <string>

#include "sim/cloud_context.h"
#include "sim/sim_http.h"

namespace tpu::sim {

// "P/N" for the reservation a resource of project `project` consumes, from a
// ReservationAffinity object: SPECIFIC_RESERVATION with values[0] "N" (the
// resource's own project's) or "projects/P/reservations/N" (shared by P);
// "" for any other affinity.
std::string ConsumedReservation(const json& reservation_affinity, const std::string& project);

// GET zones/Z/reservations (list) and zones/Z/reservations/N (`name` set).
SimResponse HandleReservations(SimContext& ctx, const SimRequest& req, const std::string& project,
                               const std::string& zone, const std::string& name);
// GET aggregated/reservations, paged like every aggregated list.
SimResponse ReservationsAggregatedList(SimContext& ctx, const SimRequest& req, const std::string& project);

}  // namespace tpu::sim
