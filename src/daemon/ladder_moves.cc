// LadderMoves: see ladder_moves.h.
#include "daemon/ladder_moves.h"

#include <algorithm>

#include "plan/ladder.h"
#include "plan/ownership.h"
#include "plan/pool_slot.h"
#include "plan/reservations.h"

namespace tpu::daemon {
namespace {

const cloud::Cluster* ClusterOf(const manifest::Target& t, const cloud::LiveState& live) {
  auto p = live.projects.find(t.project);
  if (p == live.projects.end()) return nullptr;
  for (const auto& c : p->second.clusters)
    if (c.name == t.cluster) return &c;
  return nullptr;
}

// Free VMs of the reservation rung `c` of a pool in `zone`; nullopt when the
// refresh did not read it.
std::optional<int> FreeVms(const manifest::Target& t, const manifest::Capacity& c, const std::string& zone,
                           const cloud::LiveState& live) {
  const std::string owner = c.reservation_project.empty() ? t.project : c.reservation_project;
  const cloud::Reservation* r = plan::FindReservation(live, {owner, zone, c.reservation});
  if (!r) return std::nullopt;
  return static_cast<int>(r->count - r->in_use_count);
}

std::string Vms(int n) { return std::to_string(n) + (n == 1 ? " VM" : " VMs"); }

}  // namespace

Duration LadderMoves::Backoff(int failures) const {
  const int factor = 1 << std::min(failures, 4);
  return std::chrono::duration_cast<Duration>(retry_ * factor);
}

std::map<std::string, int> LadderMoves::Look(const std::vector<const manifest::Target*>& targets,
                                             const cloud::LiveState& live, TimePoint now, bool choose) {
  std::map<std::string, int> moves;
  std::set<std::string> seen;
  for (const manifest::Target* t : targets) {
    if (t->blocked()) continue;
    const cloud::Cluster* cluster = ClusterOf(*t, live);
    if (!cluster) continue;
    bool chosen = false;
    for (const auto& spec : t->pools) {
      if (spec.ladder.empty()) continue;
      for (int i = 0; i < spec.slices; ++i) {
        const std::string slot = spec.PoolName(i);
        const std::string key = t->Key() + "/" + slot;
        std::vector<const cloud::NodePool*> pools;
        for (const auto& p : cluster->node_pools)
          if (p.name == slot || (plan::SlotOf(p) == slot && plan::PoolOwnership(p, t->Key()) == plan::Ownership::kOwned))
            pools.push_back(&p);
        int rung = -1;
        for (const auto* p : pools)
          if (int r = plan::RungOf(*t, spec, *p); r >= 0 && (rung < 0 || r < rung)) rung = r;
        if (rung <= 0) continue;  // on its best rung, gone, or on none (the plan replaces it)
        seen.insert(key);
        auto [it, fresh] = slices_.try_emplace(key);
        Slice& s = it->second;
        if (fresh || s.status.rung != rung) {
          s.status = {t->Key(), slot, rung, static_cast<int>(spec.ladder.size()),
                      manifest::CapacityName(spec.ladder[static_cast<size_t>(rung)]), 0, 0, 0,
                      "on " + plan::RungText(spec, rung) + "; first try to move it back up after " +
                          std::to_string(retry_.count() / 1000) + "s"};
          s.next_try = now + retry_;
        }
        // One pool, running: not in the middle of a move, a repair or a create.
        if (!choose || chosen || now < s.next_try || pools.size() != 1 || pools[0]->status != "RUNNING") continue;
        int to = -1;
        std::string why;
        for (int k = 0; k < rung && to < 0; ++k) {
          const manifest::Capacity& c = spec.ladder[static_cast<size_t>(k)];
          if (c.type != manifest::CapacityType::kReservation) {
            to = k;  // the create beside the running pool is the probe
            break;
          }
          std::optional<int> free = FreeVms(*t, c, spec.location, live);
          if (free && *free >= spec.node_count) {
            to = k;
            break;
          }
          why += (why.empty() ? "" : "; ") + plan::RungText(spec, k) + ": " +
                 (free ? Vms(std::max(0, *free)) + " free, needs " + Vms(spec.node_count) : "not found");
        }
        if (to < 0) {
          s.status.last = "no better rung has room (" + why + ")";
          s.next_try = now + retry_;
          continue;
        }
        moves[key] = to;
        chosen = true;
        ++s.status.tries;
        s.status.last = "trying " + plan::RungText(spec, to);
      }
    }
  }
  for (auto it = slices_.begin(); it != slices_.end();) {
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    // Forgotten only when its target was looked at: others keep their state.
    const std::string& target = it->second.status.target;
    bool looked = std::any_of(targets.begin(), targets.end(), [&](const auto* t) { return t->Key() == target; });
    it = looked ? slices_.erase(it) : std::next(it);
  }
  return moves;
}

std::set<std::string> LadderMoves::TargetsDue(TimePoint now) const {
  std::set<std::string> out;
  for (const auto& [key, s] : slices_)
    if (now >= s.next_try) out.insert(s.status.target);
  return out;
}

std::optional<TimePoint> LadderMoves::NextDue() const {
  std::optional<TimePoint> due;
  for (const auto& [key, s] : slices_)
    if (!due || s.next_try < *due) due = s.next_try;
  return due;
}

void LadderMoves::Record(const std::map<std::string, int>& asked, const plan::Plan& to_apply,
                         const apply::ApplyReport& report, const std::map<std::string, std::string>& held_why,
                         TimePoint now) {
  for (const auto& [key, to] : asked) {
    auto it = slices_.find(key);
    if (it == slices_.end()) continue;
    Slice& s = it->second;
    std::string id;
    for (const auto& t : to_apply.targets) {
      if (t.key != s.status.target) continue;
      for (const auto& a : t.actions)
        if (a.ladder_move && a.node_pool && plan::SlotOf(*a.node_pool) == s.status.pool) id = a.resource.Id();
    }
    if (id.empty()) {
      auto why = held_why.find(key);
      s.status.last = "move to rung " + std::to_string(to) + " held: " +
                      (why != held_why.end() ? why->second
                                             : std::string("not applied this pass (a change window or "
                                                           "cleanupOnly)"));
      s.next_try = now + retry_;
      continue;
    }
    const apply::TaskResult* result = nullptr;
    for (const auto& task : report.tasks)
      if (task.id == id) result = &task;
    if (result && result->state == apply::TaskResult::State::kDone) {
      s.status.last = "moved up to rung " + std::to_string(to);
      s.status.failures = 0;
      s.next_try = now + retry_;
      continue;
    }
    ++s.status.failures;
    s.status.last = "move to rung " + std::to_string(to) + " failed: " +
                    (result ? result->status.ToString() : std::string("not run"));
    s.next_try = now + Backoff(s.status.failures);
  }
}

std::vector<LadderSliceStatus> LadderMoves::Snapshot(TimePoint now) const {
  std::vector<LadderSliceStatus> out;
  for (const auto& [key, s] : slices_) {
    LadderSliceStatus st = s.status;
    st.next_try_seconds =
        std::max(0.0, std::chrono::duration<double>(s.next_try - now).count());
    out.push_back(std::move(st));
  }
  return out;
}

}  // namespace tpu::daemon
