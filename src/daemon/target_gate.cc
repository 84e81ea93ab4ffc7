// What of a target's plan may be applied now: see target_gate.h.
#include "daemon/target_gate.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "base/change_windows.h"

namespace tpu::daemon {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Same resource, same kind of action, same new values: the same action.
std::string Signature(const plan::Action& a) {
  std::string s = a.resource.Id() + " " + plan::ActionKindName(a.kind);
  for (const auto& c : a.changes) s += " " + c.path + "=" + c.after;
  return s;
}

std::string Describe(const plan::Action& a) {
  return std::string(plan::ActionKindName(a.kind)) + " " + plan::ResourceKindName(a.resource.kind) + " " +
         a.resource.name;
}

bool Broken(const std::string& status) { return status == "ERROR" || status == "RUNNING_WITH_ERROR"; }

// cleanupOnly lets through what removes capacity or repairs it as it was.
bool CleanupAllows(const plan::Action& a, const cloud::ProjectState* live) {
  switch (a.kind) {
    case plan::ActionKind::kDelete: return true;
    case plan::ActionKind::kResize: return a.blast.chips_created == 0 && a.blast.hosts_created == 0;
    case plan::ActionKind::kReplace: {
      if (a.resource.kind != plan::ResourceKind::kNodePool || !live) return false;
      for (const auto& c : live->clusters)
        if (c.name == a.resource.cluster)
          for (const auto& p : c.node_pools)
            if (p.name == a.resource.name) return Broken(p.status) && a.blast.chips_created <= a.blast.chips_destroyed;
      return false;
    }
    default: return false;
  }
}

std::vector<WindowSpec> Specs(const std::vector<manifest::ChangeWindow>& windows) {
  std::vector<WindowSpec> out;
  for (const auto& w : windows)
    out.push_back({w.allow, w.schedule, w.duration_seconds, w.time_zone, w.start, w.end});
  return out;
}

}  // namespace

bool HasBreakGlassTrailer(const std::string& message) {
  // Trailers are the last paragraph's "Key: value" lines.
  std::vector<std::string> lines;
  std::istringstream in(message);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    lines.push_back(line);
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  const std::string want = Lower(kBreakGlassTrailer);
  for (auto it = lines.rbegin(); it != lines.rend() && !it->empty(); ++it) {
    std::string l = *it;
    size_t colon = l.find(':');
    if (colon == std::string::npos) continue;
    std::string key = Lower(l.substr(0, colon));
    std::string value = l.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    if (key + ": " + Lower(value) == want) return true;
  }
  return false;
}

GateDecision GateTarget(const plan::TargetPlan& plan, const GateInput& in) {
  GateDecision d;
  const manifest::ClusterPolicy defaults{};
  const manifest::ClusterPolicy& policy = in.policy ? *in.policy : defaults;
  const bool warn = policy.drift == manifest::DriftMode::kWarn;

  std::set<std::string> baseline;
  if (in.baseline)
    for (const auto& a : in.baseline->actions)
      if (a.changes_something()) baseline.insert(Signature(a));

  std::vector<const plan::Action*> wanted;
  for (const auto& a : plan.actions) {
    if (!a.changes_something()) continue;
    // Without a baseline a changed target's actions are all the commit's (the
    // daemon has just started: git is applied once).
    // A move back up a capacity ladder is the ladder in git at work, not drift.
    const bool drift = !a.ladder_move && (!in.manifests_changed || baseline.count(Signature(a)));
    if (drift) d.drift.push_back(Describe(a));
    if (drift && warn) {
      d.drift_held = true;
      continue;
    }
    wanted.push_back(&a);
  }

  if (policy.mode == manifest::TargetMode::kCleanupOnly) {
    std::vector<const plan::Action*> kept;
    for (const auto* a : wanted) {
      if (CleanupAllows(*a, in.live)) kept.push_back(a);
      else ++d.held;
    }
    if (d.held) d.held_reason = "mode cleanupOnly: only deletes, shrinks and repairs of ERROR pools";
    wanted = std::move(kept);
  }

  if (!policy.change_windows.empty() && !wanted.empty() && !in.break_glass) {
    auto windows = ChangeWindows::Compile(Specs(policy.change_windows));
    // The loader compiled them already; a zone file removed since is a closed window.
    ChangeWindows::Decision w;
    if (windows.ok()) w = windows->At(in.now_utc);
    else w = {false, std::nullopt, windows.status().message()};
    if (!w.open) {
      d.window_closed = true;
      d.held += static_cast<int>(wanted.size());
      d.held_reason = "change window closed: " + w.why;
      d.held_until = w.opens_at;
      wanted.clear();
    }
  }

  // What depends on a held action waits with it (a MIG on its new template).
  std::set<std::string> planned, kept;
  for (const auto& a : plan.actions)
    if (a.changes_something()) planned.insert(a.resource.Id());
  for (const auto* a : wanted) kept.insert(a->resource.Id());
  for (bool dropped = true; dropped;) {
    dropped = false;
    for (auto it = wanted.begin(); it != wanted.end();) {
      bool waits = std::any_of((*it)->depends_on.begin(), (*it)->depends_on.end(), [&](const std::string& dep) {
        return planned.count(dep) && !kept.count(dep);
      });
      if (waits) {
        kept.erase((*it)->resource.Id());
        it = wanted.erase(it);
        ++d.held;
        if (d.held_reason.empty()) d.held_reason = "depends on a held action";
        dropped = true;
      } else {
        ++it;
      }
    }
  }
  for (const auto* a : wanted) d.allowed.push_back(*a);
  d.allowed_count = d.allowed.size();
  return d;
}

}  // namespace tpu::daemon
