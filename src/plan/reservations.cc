// Reservation-aware plans: see reservations.h.
#include "plan/reservations.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "plan/ladder.h"
#include "plan/normalize.h"
#include "plan/pool_slot.h"

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

std::string Vms(int n) { return std::to_string(n) + (n == 1 ? " VM" : " VMs"); }

// A laddered slice's create (or replace) whose rung has no room: it asks for
// its first fallback instead, and its SliceRung line says why.
void MoveDownTheLadder(Action& a, const std::string& why, TargetPlan* target) {
  const std::string name = a.node_pool->name;
  a.node_pool = std::move(a.fallbacks.front());
  a.node_pool->name = name;
  a.fallbacks.erase(a.fallbacks.begin());
  const int rung = RungLabelOf(*a.node_pool);
  a.reason += "; starts on rung " + std::to_string(rung) + " (" + PoolCapacityName(*a.node_pool) +
              ") of its capacity ladder: " + why;
  for (auto& line : target->ladder) {
    if (line.pool != SlotOf(*a.node_pool)) continue;
    line.rung = rung;
    line.capacity = PoolCapacityName(*a.node_pool);
    line.why = why + ": starts on rung " + std::to_string(rung);
  }
}

}  // namespace

void CheckReservations(TargetPlan& target, const cloud::LiveState& live, const manifest::Target* declared) {
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
      if (const cloud::Reservation* live_res = FindReservation(live, r)) {
        it->second.found = true;
        it->second.count = live_res->count;
        it->second.in_use = live_res->in_use_count;
      }
    }
    return it->second;
  };
  // Every reservation the manifests name is shown, drawn on or not.
  if (declared)
    for (const auto& r : ReservationsOf(*declared)) use(r);
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
    const int grows = a.kind == ActionKind::kReplace ? a.blast.hosts_created
                                                     : a.blast.hosts_created - a.blast.hosts_destroyed;
    for (;;) {
      std::optional<Ref> r;
      if (a.changes_something() && grows > 0 && !a.blast.autoscaled)
        r = ReservationOf(a, target.project, templates);
      if (!r) {
        kept.push_back(std::move(a));
        break;
      }
      ReservationUse& u = use(*r);
      if (u.found && grows > u.FreeAfter()) {
        const std::string why = "reservation " + u.project + "/" + u.name + " has " +
                                Vms(std::max(0, u.FreeAfter())) + " free (" + std::to_string(u.count) +
                                " reserved, " + std::to_string(u.in_use) + " in use, " + std::to_string(u.takes) +
                                " taken by this plan); this needs " + Vms(grows);
        if (!a.fallbacks.empty()) {  // a capacity ladder: the next rung down instead
          MoveDownTheLadder(a, why, &target);
          continue;
        }
        a.reason = why;
        u.blocked += grows;
        blocked_ids.insert(a.resource.Id());
        target.blocked_actions.push_back(std::move(a));
        break;
      }
      u.takes += grows;
      kept.push_back(std::move(a));
      break;
    }
  }
  for (auto& a : kept)
    std::erase_if(a.depends_on, [&](const std::string& d) { return blocked_ids.count(d) > 0; });
  target.actions = std::move(kept);
  for (auto& [ref, u] : uses) target.reservations.push_back(std::move(u));
}

const cloud::Reservation* FindReservation(const cloud::LiveState& live, const cloud::ReservationRef& r) {
  for (const auto& [project, state] : live.projects)
    for (const auto& res : state.reservations)
      if (res.project == r.project && res.name == r.name && (r.zone.empty() || LastSegment(res.zone) == r.zone))
        return &res;
  return nullptr;
}

std::vector<cloud::ReservationRef> ReservationsOf(const manifest::Target& t) {
  std::vector<Ref> out;
  auto add = [&](Ref r) {
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(std::move(r));
  };
  for (const auto& p : t.pools) {
    auto named = [&](const manifest::Capacity& c) {
      if (c.type == manifest::CapacityType::kReservation && !c.reservation.empty())
        add({c.reservation_project.empty() ? t.project : c.reservation_project, p.location, c.reservation});
    };
    named(p.capacity);
    for (const auto& rung : p.ladder) named(rung);
  }
  for (const auto& g : t.groups)
    if (g.instance_config && !g.instance_config->reservation.empty())
      add(ParseRef(g.instance_config->reservation, t.project, g.node_location));
  return out;
}

NamedReservations ReservationsNamedBy(const manifest::Repo& repo, const PlanOptions& options) {
  NamedReservations out;
  for (const auto& t : repo.targets) {
    if (!options.only_targets.empty() &&
        std::find(options.only_targets.begin(), options.only_targets.end(), t.Key()) == options.only_targets.end())
      continue;
    for (const auto& r : ReservationsOf(t)) {
      out.any = true;
      if (r.project == t.project || r.zone.empty()) continue;
      auto& list = out.foreign[t.project];
      if (std::find(list.begin(), list.end(), r) == list.end()) list.push_back(r);
    }
  }
  return out;
}

}  // namespace tpu::plan
