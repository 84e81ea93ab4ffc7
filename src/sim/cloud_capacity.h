// The capacity model: TPU chips available per zone and accelerator, and named
// reservations with their own size. A zone+accelerator with no entry is
// unlimited, and so is a reservation that was never declared, so an emulator
// without a capacity config never stocks out. A reservation declared with a
// machine type and a project is also a Compute resource (compute_reservations.h):
// its VM count is its chips over the machine's chips per VM, so pools and MIG
// instances, which take chips, keep its inUseCount. Not thread-safe: guarded
// by the emulator's state lock.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/sim_http.h"

namespace tpu::sim {

class CapacityModel {
 public:
  struct Reservation {
    std::string zone;
    std::string accelerator;
    int64_t chips = 0;
    int64_t used = 0;
    // Set for a reservation Compute serves (reservations.get/list):
    std::string machine_type;      // specificReservation.instanceProperties.machineType
    int64_t chips_per_vm = 1;      // from machine_type (tpu_shapes), 1 for a non-TPU type
    bool specific_required = false;  // specificReservationRequired (the API's default: false)
    std::vector<std::string> shared_with;  // shareSettings SPECIFIC_PROJECTS; empty = LOCAL
    std::string deployment_type;   // DENSE, or "" (not said)
    int block_count = 0;           // resourceStatus.reservationBlockCount, 0 = not said
    int64_t count() const { return chips / chips_per_vm; }
    int64_t in_use_count() const { return used / chips_per_vm; }
  };

  // Sets the chips a zone has for an accelerator (its GKE label value);
  // chips < 0 removes the limit. Chips in use stay in use. `model` ("SPOT" or
  // "STANDARD", Compute's provisioning models) gives that model a pool of its
  // own: Spot VMs run on spare capacity, so a zone out of on-demand chips may
  // still have spot ones, and the other way round (docs/emulator.md,
  // "Capacity"). "" is the pool both draw on when they have none of their own.
  void SetZoneChips(const std::string& zone, const std::string& accelerator, int64_t chips,
                    const std::string& model = "");
  // `name` is "N", or "P/N" for reservation N owned by project P (what a
  // shared reservation is: pools of other projects name it
  // projects/P/reservations/N). A plain "N" is found from any project.
  void SetReservation(const std::string& name, const Reservation& r);

  // Takes `chips` from the reservation when one is named ("P/N": project P's
  // reservation N), else from the zone.
  // Returns "" when granted, else the stockout message in GKE's words
  // (callers that know better, e.g. for a VM-counted reservation, word their own).
  // `model` is the requester's provisioning model (SetZoneChips).
  std::string Acquire(const std::string& zone, const std::string& accelerator,
                      const std::string& reservation, int64_t chips, const std::string& model = "");
  void Release(const std::string& zone, const std::string& accelerator,
               const std::string& reservation, int64_t chips, const std::string& model = "");

  // The reservation a pool or instance naming `reservation` ("P/N") draws
  // from, or null when none was declared.
  const Reservation* FindReservation(const std::string& reservation) const;
  // Every reservation, by "N" or "P/N".
  const std::map<std::string, Reservation>& reservations() const { return reservations_; }

  // {"zones":[{"zone","accelerator","provisioningModel"?,"chips","used"}],
  //  "reservations":[{"name","project"?,"zone","accelerator","chips","used",
  //                   "machineType"?,"count"?,"specificReservationRequired"?,
  //                   "shared"?:[projects],"deploymentType"?,"blockCount"?}]}
  json ToJson() const;
  // Merges a config of the same shape ("used" optional). A reservation with a
  // "machineType" takes its accelerator from it and may give its size as
  // "count" VMs instead of "chips".
  void Apply(const json& config);

 private:
  static std::string Key(const std::string& zone, const std::string& accelerator,
                         const std::string& model = "") {
    return zone + "|" + accelerator + (model.empty() ? "" : "|" + model);
  }
  // The key whose limit and usage a request of `model` counts against.
  std::string PoolKey(const std::string& zone, const std::string& accelerator, const std::string& model) const;
  std::map<std::string, int64_t> zone_chips_;
  std::map<std::string, int64_t> zone_used_;
  std::map<std::string, Reservation>::iterator Find(const std::string& reservation);
  std::map<std::string, Reservation> reservations_;  // by "N" or "P/N"
};

}  // namespace tpu::sim
