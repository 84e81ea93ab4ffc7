// The Reconciler's capacity ladder step (docs/capacity.md, "Fallback ladder"):
// which slices this pass tries to move back up. See ladder_moves.h.
#include "daemon/reconciler.h"

namespace tpu::daemon {

void Reconciler::ChooseLadderMoves(Cycle& c) {
  c.plan_options.ladder_moves.clear();
  // A dry run never moves a running slice: its plan would show a replace
  // that nothing applies.
  if (options_.dry_run) return;
  std::vector<const manifest::Target*> targets;
  for (const auto& [key, t] : c.declared) {
    if (!Owns(key) || c.refresh_failed.count(t->project)) continue;
    if (c.full || c.selected.count(key)) targets.push_back(t);
  }
  c.plan_options.ladder_moves = ladder_.Due(targets, live_, c.now);
}

}  // namespace tpu::daemon
