// Reservations as Compute serves them (see compute_reservations.h). Field
// names and shapes from compute.proto: Reservation,
// AllocationSpecificSKUReservation, ShareSettings, AllocationResourceStatus.
#include "sim/compute_reservations.h"

#include <algorithm>
#include <vector>

#include "sim/cloud_errors.h"
#include "sim/compute_routes.h"

namespace tpu::sim {
namespace {

// Reservation.id is server-defined (uint64, a decimal string in JSON); the
// emulator derives a stable one from the reservation's path (ours).
std::string StableReservationId(const std::string& path) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : path) h = (h ^ c) * 1099511628211ull;
  return std::to_string(1000000000000000000ull + h % 8000000000000000000ull);
}

json ReservationWire(const std::string& project, const std::string& name,
                     const CapacityModel::Reservation& r) {
  const std::string zone_path = "projects/" + project + "/zones/" + r.zone;
  const std::string path = zone_path + "/reservations/" + name;
  json share = {{"shareType", r.shared_with.empty() ? "LOCAL" : "SPECIFIC_PROJECTS"}};
  for (const auto& p : r.shared_with) share["projectMap"][p] = {{"projectId", p}};
  json wire = {{"kind", "compute#reservation"},
               {"id", StableReservationId(path)},
               {"name", name},
               {"zone", ComputeUrl(zone_path)},
               {"selfLink", ComputeUrl(path)},
               {"status", "READY"},
               {"specificReservationRequired", r.specific_required},
               // int64 fields are decimal strings in proto3 JSON.
               {"specificReservation",
                {{"count", std::to_string(r.count())},
                 {"inUseCount", std::to_string(r.in_use_count())},
                 {"instanceProperties", {{"machineType", r.machine_type}}}}},
               {"shareSettings", share}};
  if (!r.deployment_type.empty()) wire["deploymentType"] = r.deployment_type;
  if (r.block_count > 0) wire["resourceStatus"] = {{"reservationBlockCount", r.block_count}};
  return wire;
}

struct ServedReservation {
  std::string zone;
  json wire;
};

// The project's reservations Compute serves (declared with a project and a
// machine type), in (zone, name) order.
std::vector<ServedReservation> ProjectReservations(const CloudState& state, const std::string& project) {
  std::vector<ServedReservation> out;
  const std::string prefix = project + "/";
  for (const auto& [key, r] : state.capacity.reservations()) {
    if (key.rfind(prefix, 0) != 0 || r.machine_type.empty()) continue;
    out.push_back({r.zone, ReservationWire(project, key.substr(prefix.size()), r)});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.zone < b.zone; });
  return out;
}

}  // namespace

std::string ConsumedReservation(const json& ra, const std::string& project) {
  if (!ra.is_object() || ra.value("consumeReservationType", "") != "SPECIFIC_RESERVATION") return "";
  const json values = ra.value("values", json::array());
  if (values.empty() || !values[0].is_string()) return "";
  const std::string v = values[0].get<std::string>();
  const std::string prefix = "projects/";
  const auto mid = v.find("/reservations/");
  if (v.rfind(prefix, 0) == 0 && mid != std::string::npos)
    return v.substr(prefix.size(), mid - prefix.size()) + "/" + v.substr(mid + 14);
  return project + "/" + v.substr(v.rfind('/') + 1);
}

SimResponse HandleReservations(SimContext& ctx, const SimRequest& req, const std::string& project,
                               const std::string& zone, const std::string& name) {
  std::vector<ServedReservation> all = ProjectReservations(ctx.state, project);
  std::erase_if(all, [&](const ServedReservation& r) { return r.zone != zone; });
  const std::string path = "projects/" + project + "/zones/" + zone + "/reservations";
  if (!name.empty()) {
    for (const auto& r : all)
      if (r.wire["name"] == name) return OkResponse(r.wire);
    return ErrorResponse(ComputeNotFound(path + "/" + name));
  }
  ComputePage page;
  if (auto err = ComputePaginate(req, all.size(), &page)) return ErrorResponse(*err);
  json body = {{"kind", "compute#reservationList"}, {"id", path}, {"selfLink", ComputeUrl(path)}};
  for (size_t i = page.begin; i < page.end; ++i) body["items"].push_back(all[i].wire);
  if (!page.next.empty()) body["nextPageToken"] = page.next;
  return OkResponse(body);
}

SimResponse ReservationsAggregatedList(SimContext& ctx, const SimRequest& req, const std::string& project) {
  std::vector<ServedReservation> all = ProjectReservations(ctx.state, project);
  ComputePage page;
  if (auto err = ComputePaginate(req, all.size(), &page)) return ErrorResponse(*err);
  const std::string path = "projects/" + project + "/aggregated/reservations";
  json body = {{"kind", "compute#reservationAggregatedList"}, {"id", path},
               {"selfLink", ComputeUrl(path)}, {"items", json::object()}};
  for (size_t i = page.begin; i < page.end; ++i)
    body["items"]["zones/" + all[i].zone]["reservations"].push_back(all[i].wire);
  if (!page.next.empty()) body["nextPageToken"] = page.next;
  return OkResponse(body);
}

}  // namespace tpu::sim
