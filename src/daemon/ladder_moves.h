// LadderMoves: watch moving slices back up their capacity ladders
// (docs/capacity.md, "Fallback ladder"). A slice that landed on a worse rung
// (a stockout, a reservation without room) is tried on a better one again:
//
// - at most one slice per target at a time, first after `retry`, then with
//   a backoff that doubles after each failed try (up to ×16);
// - only onto a rung that has room: a reservation with enough free VMs, or a
//   rung that is not a reservation, where the create itself is the probe (the
//   new pool is created beside the running one, which is deleted only once
//   the new one runs; a stockout deletes the failed pool and leaves the
//   slice where it was);
// - only when Kueue's scale-down gate would let the old pool go now: a move
//   the gate makes wait is dropped for this pass (never waited on, so no
//   queue is held and no admitted workload interrupted for a move).
//
// Keeps, per slice, its rung, the next try and the last outcome, for /status.
// Loop-thread only.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "apply/executor.h"
#include "cloud/types.h"
#include "daemon/clock.h"
#include "daemon/daemon_status.h"
#include "manifest/types.h"
#include "plan/model.h"

namespace tpu::daemon {

class LadderMoves {
 public:
  explicit LadderMoves(std::chrono::milliseconds retry) : retry_(retry) {}

  // Looks at where every laddered slice of `targets` stands in `live` and
  // returns the moves due now ("project/cluster/slot" → rung), at most one per
  // target. Slices back on their best rung, or gone, are forgotten.
  std::map<std::string, int> Due(const std::vector<const manifest::Target*>& targets, const cloud::LiveState& live,
                                 TimePoint now) {
    return Look(targets, live, now, true);
  }
  // Due's bookkeeping without a move: after an apply, so a slice that just
  // landed on a worse rung gets its first try scheduled.
  void Observe(const std::vector<const manifest::Target*>& targets, const cloud::LiveState& live, TimePoint now) {
    Look(targets, live, now, false);
  }
  // Targets with a slice whose try is due at `now` (to re-plan them).
  std::set<std::string> TargetsDue(TimePoint now) const;
  // When the next try is due; nullopt when no slice waits.
  std::optional<TimePoint> NextDue() const;

  // The outcome of this pass's `asked` moves: `to_apply` (after every gate)
  // and the apply's `report`. A move not in `to_apply` was held (`held_why`).
  void Record(const std::map<std::string, int>& asked, const plan::Plan& to_apply,
              const apply::ApplyReport& report, const std::map<std::string, std::string>& held_why, TimePoint now);

  std::vector<LadderSliceStatus> Snapshot(TimePoint now) const;

 private:
  struct Slice {
    LadderSliceStatus status;
    TimePoint next_try{};
  };
  std::map<std::string, int> Look(const std::vector<const manifest::Target*>& targets, const cloud::LiveState& live,
                                  TimePoint now, bool choose);
  // After `failures` failed tries.
  Duration Backoff(int failures) const;

  std::chrono::milliseconds retry_;
  std::map<std::string, Slice> slices_;  // by "project/cluster/slot"
};

}  // namespace tpu::daemon
