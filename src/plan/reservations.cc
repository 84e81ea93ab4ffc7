// Reservation-aware plans: see reservations.h.
#include "plan/reservations.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "plan/normalize.h"

namespace tpu::plan {
namespace {

using Ref = cloud::ReservationRef;

// "R" (the target's project) or "projects/P/reservations/R", consumed in `zone`.
Ref ParseRef(const std::string& value, const std::string& project, const std::string& zone) {
  Ref r = cloud::ParseSharedReservationName(value).value_or(Ref{project, "", value});
  r.zone = zone;
  return r;
}

// The reservation an action's created side draws on, if any. `templates`:
// each template's reservation, by template name.
std::optional<Ref> ReservationOf(const Action& a, const std::string& project,
                                 const std::map<std::string, std::string>& templates) {
  if (a.node_pool && a.node_pool->reservation_affinity) {
    const auto& ra = *a.node_pool->reservation_affinity;
    if (ra.consume_reservation_type != "SPECIFIC_RESERVATION" || ra.values.empty()) return std::nullopt;
    const std::string zone = a.node_pool->locations.empty() ? "" : a.node_pool->locations.front();
    return ParseRef(ra.values.front(), project, zone);
  }
  if (a.instance_group_manager) {
    const std::string& url = a.instance_group_manager->instance_template;
    auto t = templates.find(LastSegment(url));
    if (t == templates.end() || t->second.empty()) return std::nullopt;
    return ParseRef(t->second, project, LastSegment(a.instance_group_manager->zone));
  }
  return std::nullopt;
}

// The owner's copy, or the one a consumer's refresh read from the owner
// (a shared reservation is listed only by its owner).
const cloud::Reservation* Find(const cloud::LiveState& live, const Ref& r) {
  for (const auto& [project, state] : live.projects)
    for (const auto& res : state.reservations)
      if (res.project == r.project && res.name == r.name && (r.zone.empty() || LastSegment(res.zone) == r.zone))
        return &res;
  return nullptr;
}

std::string Vms(int n) { return std::to_string(n) + (n == 1 ? " VM" : " VMs"); }

}  // namespace

void CheckReservations(TargetPlan& target, const cloud::LiveState& live) {
  // Copied, not pointed at: the actions move below.
  std::map<std::string, std::string> templates;
  if (auto p = live.projects.find(target.project); p != live.projects.end())
    for (const auto& t : p->second.instance_templates) templates[t.name] = t.reservation;
  for (const auto& a : target.actions)
    if (a.instance_template) templates[a.instance_template->name] = a.instance_template->reservation;

  std::map<Ref, ReservationUse> uses;
  auto use = [&](const Ref& r) -> ReservationUse& {
    auto [it, fresh] = uses.try_emplace(r);
    if (fresh) {
      it->second.name = r.name;
      it->second.project = r.project;
      it->second.zone = r.zone;
      if (const cloud::Reservation* live_res = Find(live, r)) {
        it->second.found = true;
        it->second.count = live_res->count;
        it->second.in_use = live_res->in_use_count;
      }
    }
    return it->second;
  };
  // Deletes and shrinks first: the executor runs them before the creates.
  for (const auto& a : target.actions) {
    if (!a.changes_something() || a.blast.hosts_destroyed <= a.blast.hosts_created) continue;
    if (auto r = ReservationOf(a, target.project, templates))
      use(*r).frees += a.blast.hosts_destroyed - (a.kind == ActionKind::kReplace ? 0 : a.blast.hosts_created);
  }
  std::vector<Action> kept;
  kept.reserve(target.actions.size());
  std::set<std::string> blocked_ids;
  for (auto& a : target.actions) {
    std::optional<Ref> r;
    const int grows = a.kind == ActionKind::kReplace ? a.blast.hosts_created
                                                     : a.blast.hosts_created - a.blast.hosts_destroyed;
    if (a.changes_something() && grows > 0 && !a.blast.autoscaled)
      r = ReservationOf(a, target.project, templates);
    if (!r) {
      kept.push_back(std::move(a));
      continue;
    }
    ReservationUse& u = use(*r);
    if (u.found && grows > u.FreeAfter()) {
      a.reason = "reservation " + u.project + "/" + u.name + " has " + Vms(std::max(0, u.FreeAfter())) +
                 " free (" + std::to_string(u.count) + " reserved, " + std::to_string(u.in_use) + " in use, " +
                 std::to_string(u.takes) + " taken by this plan); this needs " + Vms(grows);
      u.blocked += grows;
      blocked_ids.insert(a.resource.Id());
      target.blocked_actions.push_back(std::move(a));
      continue;
    }
    u.takes += grows;
    kept.push_back(std::move(a));
  }
  for (auto& a : kept)
    std::erase_if(a.depends_on, [&](const std::string& d) { return blocked_ids.count(d) > 0; });
  target.actions = std::move(kept);
  for (auto& [ref, u] : uses) target.reservations.push_back(std::move(u));
}

NamedReservations ReservationsNamedBy(const manifest::Repo& repo, const PlanOptions& options) {
  NamedReservations out;
  auto add = [&](const manifest::Target& t, const Ref& r) {
    out.any = true;
    if (r.project == t.project || r.zone.empty()) return;
    cloud::ReservationRef ref{r.project, r.zone, r.name};
    auto& list = out.foreign[t.project];
    if (std::find(list.begin(), list.end(), ref) == list.end()) list.push_back(ref);
  };
  for (const auto& t : repo.targets) {
    if (!options.only_targets.empty() &&
        std::find(options.only_targets.begin(), options.only_targets.end(), t.Key()) == options.only_targets.end())
      continue;
    for (const auto& p : t.pools)
      if (p.capacity.type == manifest::CapacityType::kReservation && !p.capacity.reservation.empty())
        add(t, {p.capacity.reservation_project.empty() ? t.project : p.capacity.reservation_project, p.location,
                p.capacity.reservation});
    for (const auto& g : t.groups)
      if (g.instance_config && !g.instance_config->reservation.empty())
        add(t, ParseRef(g.instance_config->reservation, t.project, g.node_location));
  }
  return out;
}

}  // namespace tpu::plan
