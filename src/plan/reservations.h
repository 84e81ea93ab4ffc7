// Reservation-aware plans (docs/capacity.md): what each reservation a target's
// pools and groups name has free before the plan and after it, in VMs, and
// the creates and growths that would need more than it has. Those are taken
// out of the plan at plan time, with the numbers, rather than left for an
// apply that stocks out; the target's other actions go on.
//
// A pool names its reservation in reservationAffinity (SPECIFIC_RESERVATION,
// "R" or "projects/OWNER/reservations/R"); a TPUNodeGroup's template names it
// in `reservation`. A reservation the refresh did not read is shown as
// unknown and blocks nothing. Autoscaled pools take nothing now: their VMs
// are possible capacity, drawn when workloads make the autoscaler ask.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cloud/shared_reservations.h"
#include "cloud/types.h"
#include "manifest/types.h"
#include "plan/model.h"
#include "plan/planner.h"

namespace tpu::plan {

// REQUIRES: the target's actions are final (ordered, guards applied).
// `declared`, when given: its reservations are listed even when no action draws on them.
void CheckReservations(TargetPlan& target, const cloud::LiveState& live,
                       const manifest::Target* declared = nullptr);

// The owner's copy of reservation `r` in `live`, or the one a consumer's
// refresh read from the owner (a shared reservation is listed only by its
// owner); null when the refresh did not read it.
const cloud::Reservation* FindReservation(const cloud::LiveState& live, const cloud::ReservationRef& r);

// Every reservation a target's pools (each rung of a ladder) and groups name.
std::vector<cloud::ReservationRef> ReservationsOf(const manifest::Target& target);

// What the refresh must read for CheckReservations: whether any selected
// target names a reservation, and by project the reservations of other
// projects its manifests name (cloud::RefreshOptions::named_reservations).
struct NamedReservations {
  bool any = false;
  std::map<std::string, std::vector<cloud::ReservationRef>> foreign;
};
NamedReservations ReservationsNamedBy(const manifest::Repo& repo, const PlanOptions& options);

}  // namespace tpu::plan
