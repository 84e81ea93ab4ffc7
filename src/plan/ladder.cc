// Capacity ladders: see ladder.h.
#include "plan/ladder.h"

#include "cloud/shared_reservations.h"
#include "plan/desired.h"
#include "plan/normalize.h"

namespace tpu::plan {
namespace {

// The reservation a pool is bound to, relative to `project`; "" when none.
std::string BoundReservation(const cloud::NodePool& p, const std::string& project) {
  const auto& ra = p.reservation_affinity;
  if (!ra || ra->consume_reservation_type != "SPECIFIC_RESERVATION" || ra->values.empty()) return "";
  return ReservationName(ra->values.front(), project);
}

}  // namespace

int RungOf(const manifest::Target& target, const manifest::TPUNodePool& spec, const cloud::NodePool& live) {
  const std::string have = BoundReservation(live, target.project);
  for (size_t k = 0; k < spec.ladder.size(); ++k) {
    cloud::NodePool rung;
    SetCapacity(target, spec.ladder[k], &rung);
    if (rung.spot == live.spot && rung.flex_start == live.flex_start &&
        BoundReservation(rung, target.project) == have)
      return static_cast<int>(k);
  }
  return -1;
}

cloud::NodePool AtRung(const manifest::Target& target, const manifest::TPUNodePool& spec,
                       const cloud::NodePool& desired, int rung) {
  cloud::NodePool p = desired;
  SetCapacity(target, spec.ladder[static_cast<size_t>(rung)], &p);
  if (!p.resource_labels) p.resource_labels.emplace();
  (*p.resource_labels)[kRungLabel] = std::to_string(rung);
  return p;
}

int RungLabelOf(const cloud::NodePool& pool) {
  if (!pool.resource_labels) return -1;
  auto it = pool.resource_labels->find(kRungLabel);
  if (it == pool.resource_labels->end() || it->second.empty() ||
      it->second.find_first_not_of("0123456789") != std::string::npos || it->second.size() > 3)
    return -1;
  return std::stoi(it->second);
}

std::string PoolCapacityName(const cloud::NodePool& pool) {
  if (pool.flex_start) return "flexStart";
  if (pool.spot) return "spot";
  const auto& ra = pool.reservation_affinity;
  if (ra && ra->consume_reservation_type == "SPECIFIC_RESERVATION" && !ra->values.empty()) {
    // As manifest::CapacityName spells a shared one: "OWNER/NAME".
    auto shared = cloud::ParseSharedReservationName(ra->values.front());
    return "reservation " + (shared ? shared->project + "/" + shared->name : ra->values.front());
  }
  return "onDemand";
}

std::string RungText(const manifest::TPUNodePool& spec, int rung) {
  if (rung < 0 || static_cast<size_t>(rung) >= spec.ladder.size()) return "no rung";
  return "rung " + std::to_string(rung) + " (" + manifest::CapacityName(spec.ladder[static_cast<size_t>(rung)]) + ")";
}

}  // namespace tpu::plan
