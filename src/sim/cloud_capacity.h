// The capacity model: TPU chips available per zone and accelerator, and named
// reservations with their own size. A zone+accelerator with no entry is
// unlimited, and so is a reservation that was never declared, so an emulator
// without a capacity config never stocks out. Not thread-safe: guarded by the
// emulator's state lock.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "sim/sim_http.h"

namespace tpu::sim {

class CapacityModel {
 public:
  struct Reservation {
    std::string zone;
    std::string accelerator;
    int64_t chips = 0;
    int64_t used = 0;
  };

  // Sets the chips a zone has for an accelerator (its GKE label value);
  // chips < 0 removes the limit. Chips in use stay in use.
  void SetZoneChips(const std::string& zone, const std::string& accelerator, int64_t chips);
  // `name` is "N", or "P/N" for reservation N owned by project P (what a
  // shared reservation is: pools of other projects name it
  // projects/P/reservations/N). A plain "N" is found from any project.
  void SetReservation(const std::string& name, const Reservation& r);

  // Takes `chips` from the reservation when one is named ("P/N": project P's
  // reservation N), else from the zone.
  // Returns "" when granted, else the stockout message in GKE's words.
  std::string Acquire(const std::string& zone, const std::string& accelerator,
                      const std::string& reservation, int64_t chips);
  void Release(const std::string& zone, const std::string& accelerator,
               const std::string& reservation, int64_t chips);

  // {"zones":[{"zone","accelerator","chips","used"}],
  //  "reservations":[{"name","project"?,"zone","accelerator","chips","used"}]}
  json ToJson() const;
  // Merges a config of the same shape ("used" optional).
  void Apply(const json& config);

 private:
  static std::string Key(const std::string& zone, const std::string& accelerator) {
    return zone + "|" + accelerator;
  }
  std::map<std::string, int64_t> zone_chips_;
  std::map<std::string, int64_t> zone_used_;
  std::map<std::string, Reservation>::iterator Find(const std::string& reservation);
  std::map<std::string, Reservation> reservations_;  // by "N" or "P/N"
};

}  // namespace tpu::sim
