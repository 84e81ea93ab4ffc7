// What of a target's plan the daemon may apply now, beyond plan's guards:
//
// - Drift (spec.drift): actions a target needs although its manifests did not
//   change are drift, made behind git's back. `correct` applies them; `warn`
//   reports them and leaves them alone. When a commit changes the target,
//   only the actions the commit brings are applied in warn mode: an action the
//   previous desired state would also take against the same live state is
//   drift, and stays.
// - spec.mode cleanupOnly: deletes, shrinking resizes and replaces that repair
//   a pool in ERROR only; no create, no growth, no update.
// - Change windows (spec.changeWindows): outside them every mutating action
//   waits, and /status says until when; a commit whose message carries the
//   trailer `TPU-Provisioner: break-glass` goes through.
//
// Pure decisions over values; the reconciler keeps the state between passes
// (drift first seen, the previous desired state of warn targets).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cloud/types.h"
#include "manifest/types.h"
#include "plan/model.h"

namespace tpu::daemon {

// The trailer that lets a commit through closed change windows.
inline constexpr const char* kBreakGlassTrailer = "TPU-Provisioner: break-glass";

// True when the message's trailers (its last paragraph) hold kBreakGlassTrailer
// (the key case-insensitively, as git's trailers).
bool HasBreakGlassTrailer(const std::string& commit_message);

struct GateInput {
  const manifest::ClusterPolicy* policy = nullptr;  // null: defaults (a vanished target)
  // The plan of the desired state last applied (warn mode; null when unknown).
  const plan::TargetPlan* baseline = nullptr;
  bool manifests_changed = false;  // the target's files changed in this revision
  bool break_glass = false;
  int64_t now_utc = 0;
  const cloud::ProjectState* live = nullptr;  // for cleanupOnly's repairs
};

struct GateDecision {
  std::vector<plan::Action> allowed;  // in plan order
  size_t allowed_count = 0;           // allowed.size(), kept when the actions move on
  std::vector<std::string> drift;     // "update nodePool train-0" of each drift action
  bool drift_held = false;            // warn mode left them alone
  int held = 0;                       // actions not applied for mode or window
  std::string held_reason;
  std::optional<int64_t> held_until;  // a closed window's opening (UTC seconds)
  bool window_closed = false;
};

GateDecision GateTarget(const plan::TargetPlan& plan, const GateInput& in);

}  // namespace tpu::daemon
