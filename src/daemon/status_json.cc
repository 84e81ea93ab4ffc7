// StatusJson: see status_json.h.
#include "daemon/status_json.h"

namespace tpu::daemon {

nlohmann::json StatusJson(const DaemonStatus& s) {
  using nlohmann::json;
  json targets = json::array();
  for (const auto& t : s.targets) {
    json plan = {{"create", t.last_plan.create},           {"update", t.last_plan.update},
                 {"replace", t.last_plan.replace},         {"delete", t.last_plan.remove},
                 {"noop", t.last_plan.noop},               {"chipsCreated", t.last_plan.chips_created},
                 {"chipsDestroyed", t.last_plan.chips_destroyed}, {"actions", t.last_plan_actions}};
    targets.push_back({{"target", t.key},
                       {"state", TargetStateName(t.state)},
                       {"revision", t.revision},
                       {"lastPlan", plan},
                       {"errors", t.errors},
                       {"lastError", t.last_error},
                       {"consecutiveFailures", t.consecutive_failures},
                       {"retryInSeconds", t.retry_in_seconds},
                       {"declaredChips", t.declared_chips},
                       {"liveChips", t.live_chips},
                       {"vanished", t.vanished}});
  }
  json rewrite = nullptr;
  if (s.history_rewrite)
    rewrite = {{"from", s.history_rewrite->from}, {"to", s.history_rewrite->to},
               {"held", s.history_rewrite->held}};
  return {{"source", s.source},
          {"revision", s.revision},
          {"lastAppliedRevision", s.last_applied_revision},
          {"ready", s.ready},
          {"dryRun", s.dry_run},
          {"lastError", s.last_error},
          {"repoErrors", s.repo_errors},
          {"historyRewrite", rewrite},
          {"historyRewrites", s.history_rewrites},
          {"targets", targets}};
}

}  // namespace tpu::daemon
