// The reconciler's use of target_gate.h: which targets' plans are trimmed, the
// state kept between passes (warn targets' last applied desired state,
// changes still to apply, when drift was first seen, the next window to
// open), and what /status says about it.
#include <algorithm>
#include <chrono>

#include "daemon/reconciler.h"
#include "plan/planner.h"

namespace tpu::daemon {
namespace {

int64_t WallSeconds(const Clock* clock) {
  return std::chrono::duration_cast<std::chrono::seconds>(clock->WallNow().time_since_epoch()).count();
}

}  // namespace

std::map<std::string, GateDecision> Reconciler::GatePlan(const manifest::Repo& repo,
                                                         const std::set<std::string>& changed, const source::Revision& rev,
                                                         plan::Plan* to_apply, std::set<std::string>* eligible,
                                                         TimePoint now) {
  std::map<std::string, GateDecision> gates;
  unapplied_changes_.insert(changed.begin(), changed.end());
  window_held_.clear();
  next_window_.reset();
  const int64_t wall = WallSeconds(clock_);
  const bool break_glass = rev.is_commit && HasBreakGlassTrailer(rev.message);
  std::map<std::string, const manifest::Target*> declared;
  for (const auto& t : repo.targets) declared[t.Key()] = &t;

  std::vector<plan::TargetPlan> kept;
  for (auto& tp : to_apply->targets) {
    auto d = declared.find(tp.key);
    const manifest::Target* target = d == declared.end() ? nullptr : d->second;
    GateInput in;
    in.policy = target ? &target->policy : nullptr;
    in.manifests_changed = unapplied_changes_.count(tp.key) > 0;
    in.break_glass = break_glass;
    in.now_utc = wall;
    auto live = live_.projects.find(tp.project);
    in.live = live == live_.projects.end() ? nullptr : &live->second;
    // Warn mode needs what the last applied desired state would do now.
    std::optional<plan::TargetPlan> baseline;
    auto b = warn_baseline_.find(tp.key);
    if (target && target->policy.drift == manifest::DriftMode::kWarn && in.manifests_changed &&
        b != warn_baseline_.end()) {
      manifest::Repo old;
      old.targets = {b->second};
      plan::PlanOptions o;
      o.only_targets = {tp.key};
      o.fingerprint_live = false;
      o.allow_mass_delete = options_.allow_mass_delete;
      plan::Plan p = plan::ComputePlan(old, live_, o);
      if (!p.targets.empty()) baseline = std::move(p.targets.front());
    }
    in.baseline = baseline ? &*baseline : nullptr;
    GateDecision g = GateTarget(tp, in);
    // Said once per stretch of drift (correct mode puts it back at once, so
    // each drift check that finds some says so).
    if (!g.drift.empty() && !drift_since_.count(tp.key)) {
      const bool corrected = !g.drift_held && !options_.dry_run;
      std::string list;
      for (size_t i = 0; i < g.drift.size() && i < 5; ++i) list += (i ? ", " : "") + g.drift[i];
      if (g.drift.size() > 5) list += ", …";
      Emit("drift.detected", tp.key, rev.id,
           "tpu-provisioner: " + std::to_string(g.drift.size()) + " resources of " + tp.key + " drifted from git (" +
               list + ")" + (corrected ? "; putting them back" : "; drift: warn leaves them"),
           {{"resources", g.drift}, {"corrected", corrected}});
    }
    size_t before = 0;
    for (const auto& a : tp.actions) before += a.changes_something() ? 1 : 0;
    if (g.window_closed) {
      window_held_.insert(tp.key);
      if (g.held_until) {
        TimePoint at = now + std::chrono::seconds(std::max<int64_t>(*g.held_until - wall, 0));
        if (!next_window_ || at < *next_window_) next_window_ = at;
      }
    }
    if (g.allowed.size() != before) {
      tp.actions = std::move(g.allowed);
      if (tp.actions.empty()) eligible->erase(tp.key);
    }
    g.allowed.clear();  // the report needs only the count
    gates[tp.key] = std::move(g);
    if (!tp.actions.empty()) kept.push_back(std::move(tp));
  }
  to_apply->targets = std::move(kept);
  return gates;
}

void Reconciler::ReportGates(const plan::Plan& plan, const std::map<std::string, GateDecision>& gates,
                             const std::set<std::string>& eligible, const manifest::Repo& repo) {
  const int64_t wall = WallSeconds(clock_);
  std::map<std::string, const manifest::Target*> declared;
  for (const auto& t : repo.targets) declared[t.Key()] = &t;
  for (const auto& t : plan.targets) {
    auto r = reports_.find(t.key);
    if (r == reports_.end()) continue;
    TargetReport& rep = r->second;
    auto d = declared.find(t.key);
    const manifest::Target* target = d == declared.end() ? nullptr : d->second;
    const bool warn = target && target->policy.drift == manifest::DriftMode::kWarn;
    rep.drift_mode = warn ? "warn" : "correct";
    auto g = gates.find(t.key);
    if (g == gates.end()) {
      // In sync: no drift, nothing held. (Targets backing off, or not
      // executable, keep what they had.)
      const bool in_sync = std::none_of(t.actions.begin(), t.actions.end(),
                                        [](const plan::Action& a) { return a.changes_something(); });
      if (t.executable() && in_sync) {
        rep.drift.clear();
        rep.drift_corrected = false;
        rep.drift_since = 0;
        drift_since_.erase(t.key);
        rep.held_actions = 0;
        rep.held_reason.clear();
        rep.held_until = 0;
        unapplied_changes_.erase(t.key);
        if (target && warn) warn_baseline_[t.key] = *target;
      }
      continue;
    }
    const GateDecision& gd = g->second;
    rep.drift = gd.drift;
    rep.drift_corrected = !gd.drift.empty() && !gd.drift_held && !options_.dry_run;
    if (gd.drift.empty() || rep.drift_corrected) drift_since_.erase(t.key);
    else if (!drift_since_.count(t.key)) drift_since_[t.key] = wall;
    auto since = drift_since_.find(t.key);
    rep.drift_since = since == drift_since_.end() ? 0 : since->second;
    rep.held_actions = gd.held;
    rep.held_reason = gd.held_reason;
    rep.held_until = gd.held_until.value_or(0);
    // The commit's changes are applied once nothing of them waits.
    const bool applied = !options_.dry_run && gd.held == 0 &&
                         (eligible.count(t.key) ? rep.state == TargetState::kInSync : gd.allowed_count == 0);
    if (applied) {
      unapplied_changes_.erase(t.key);
      if (target && warn) warn_baseline_[t.key] = *target;
    }
    if (rep.state == TargetState::kFailed || rep.state == TargetState::kWaitingForCapacity ||
        rep.state == TargetState::kInterrupted || rep.state == TargetState::kWaitingForWorkloads ||
        options_.dry_run)
      continue;
    if (gd.window_closed) rep.state = TargetState::kWaitingForWindow;
    else if (gd.held) rep.state = TargetState::kHeld;
    else if (gd.drift_held) rep.state = TargetState::kDrifted;
  }
}

}  // namespace tpu::daemon
