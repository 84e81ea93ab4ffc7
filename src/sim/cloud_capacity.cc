// Chip accounting per zone+accelerator and per reservation (see cloud_capacity.h).
#include "sim/cloud_capacity.h"

#include <algorithm>

#include "sim/tpu_shapes.h"

namespace tpu::sim {

void CapacityModel::SetZoneChips(const std::string& zone, const std::string& accelerator,
                                 int64_t chips, const std::string& model) {
  if (chips < 0) zone_chips_.erase(Key(zone, accelerator, model));
  else zone_chips_[Key(zone, accelerator, model)] = chips;
}

std::string CapacityModel::PoolKey(const std::string& zone, const std::string& accelerator,
                                   const std::string& model) const {
  if (!model.empty() && zone_chips_.count(Key(zone, accelerator, model))) return Key(zone, accelerator, model);
  return Key(zone, accelerator);
}

void CapacityModel::SetReservation(const std::string& name, const Reservation& r) {
  int64_t used = reservations_.count(name) ? reservations_[name].used : r.used;
  reservations_[name] = r;
  reservations_[name].used = used;
}

std::map<std::string, CapacityModel::Reservation>::iterator CapacityModel::Find(const std::string& reservation) {
  auto it = reservations_.find(reservation);
  if (it != reservations_.end()) return it;
  // "P/N" also finds a reservation declared without a project.
  auto slash = reservation.find('/');
  return slash == std::string::npos ? it : reservations_.find(reservation.substr(slash + 1));
}

const CapacityModel::Reservation* CapacityModel::FindReservation(const std::string& reservation) const {
  auto it = reservations_.find(reservation);
  auto slash = reservation.find('/');
  if (it == reservations_.end() && slash != std::string::npos)
    it = reservations_.find(reservation.substr(slash + 1));  // as Find: declared without a project
  return it == reservations_.end() ? nullptr : &it->second;
}

std::string CapacityModel::Acquire(const std::string& zone, const std::string& accelerator,
                                   const std::string& reservation, int64_t chips, const std::string& model) {
  if (!reservation.empty()) {
    auto it = Find(reservation);
    if (it == reservations_.end()) return "";
    Reservation& r = it->second;
    if (r.used + chips > r.chips) {
      return "GCE_STOCKOUT: The reservation '" + reservation + "' in zone '" + zone +
             "' does not have enough resources available to fulfill the request "
             "(ZONE_RESOURCE_POOL_EXHAUSTED): " + std::to_string(chips) + " " + accelerator +
             " chips requested, " + std::to_string(r.chips - r.used) + " available.";
    }
    r.used += chips;
    return "";
  }
  const std::string key = PoolKey(zone, accelerator, model);
  auto limit = zone_chips_.find(key);
  if (limit != zone_chips_.end() && zone_used_[key] + chips > limit->second) {
    return "GCE_STOCKOUT: The zone '" + zone +
           "' does not have enough resources available to fulfill the request "
           "(ZONE_RESOURCE_POOL_EXHAUSTED). Try a different zone, or try again later.";
  }
  zone_used_[key] += chips;
  return "";
}

void CapacityModel::Release(const std::string& zone, const std::string& accelerator,
                            const std::string& reservation, int64_t chips, const std::string& model) {
  if (!reservation.empty()) {
    auto it = Find(reservation);
    if (it != reservations_.end()) it->second.used = std::max<int64_t>(0, it->second.used - chips);
    return;
  }
  auto& used = zone_used_[PoolKey(zone, accelerator, model)];
  used = std::max<int64_t>(0, used - chips);
}

json CapacityModel::ToJson() const {
  json zones = json::array();
  std::map<std::string, bool> keys;
  for (const auto& [k, v] : zone_chips_) keys[k] = true;
  for (const auto& [k, v] : zone_used_) keys[k] = true;
  for (const auto& [k, unused] : keys) {
    auto bar = k.find('|');
    auto bar2 = k.find('|', bar + 1);
    json z = {{"zone", k.substr(0, bar)}, {"accelerator", k.substr(bar + 1, bar2 == std::string::npos
                                                                              ? std::string::npos : bar2 - bar - 1)}};
    if (bar2 != std::string::npos) z["provisioningModel"] = k.substr(bar2 + 1);
    auto limit = zone_chips_.find(k);
    z["chips"] = limit == zone_chips_.end() ? json(-1) : json(limit->second);
    auto used = zone_used_.find(k);
    z["used"] = used == zone_used_.end() ? 0 : used->second;
    zones.push_back(z);
  }
  json reservations = json::array();
  for (const auto& [name, r] : reservations_) {
    auto slash = name.find('/');
    json j = {{"name", name.substr(slash == std::string::npos ? 0 : slash + 1)}, {"zone", r.zone},
              {"accelerator", r.accelerator}, {"chips", r.chips}, {"used", r.used}};
    if (slash != std::string::npos) j["project"] = name.substr(0, slash);
    if (!r.machine_type.empty()) {
      j["machineType"] = r.machine_type;
      j["count"] = r.count();
      j["specificReservationRequired"] = r.specific_required;
    }
    if (!r.shared_with.empty()) j["shared"] = r.shared_with;
    if (!r.deployment_type.empty()) j["deploymentType"] = r.deployment_type;
    if (r.block_count > 0) j["blockCount"] = r.block_count;
    reservations.push_back(j);
  }
  return {{"zones", zones}, {"reservations", reservations}};
}

namespace {

// One "reservations" entry of the capacity config. With a machineType, the
// accelerator and chips per VM come from the machine (tpu_shapes), and the
// size may be "count" VMs (Compute's specificReservation.count).
CapacityModel::Reservation ReservationFromConfig(const json& r) {
  CapacityModel::Reservation res;
  res.zone = r.value("zone", "");
  res.accelerator = r.value("accelerator", "");
  res.chips = r.value("chips", int64_t{0});
  res.used = r.value("used", int64_t{0});
  res.machine_type = r.value("machineType", "");
  if (!res.machine_type.empty()) {
    if (auto tpu = FindTpuMachine(res.machine_type)) {
      res.accelerator = tpu->accelerator;
      res.chips_per_vm = tpu->chips_per_vm;
    }
    if (r.contains("count")) res.chips = r["count"].get<int64_t>() * res.chips_per_vm;
  }
  res.specific_required = r.value("specificReservationRequired", false);
  res.shared_with = r.value("shared", std::vector<std::string>{});
  res.deployment_type = r.value("deploymentType", "");
  res.block_count = r.value("blockCount", 0);
  return res;
}

}  // namespace

void CapacityModel::Apply(const json& config) {
  for (const auto& z : config.value("zones", json::array())) {
    std::string zone = z.value("zone", ""), accel = z.value("accelerator", "");
    std::string model = z.value("provisioningModel", "");
    if (z.contains("chips")) SetZoneChips(zone, accel, z["chips"].get<int64_t>(), model);
    if (z.contains("used")) zone_used_[Key(zone, accel, model)] = z["used"].get<int64_t>();
  }
  for (const auto& r : config.value("reservations", json::array())) {
    Reservation res = ReservationFromConfig(r);
    std::string name = r.value("name", "");
    if (!r.value("project", "").empty()) name = r.value("project", "") + "/" + name;
    if (r.contains("used")) reservations_[name] = res;
    else SetReservation(name, res);
  }
}

}  // namespace tpu::sim
