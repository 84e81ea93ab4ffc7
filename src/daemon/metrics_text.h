// MetricsText: the Prometheus text exposition (format 0.0.4) of the daemon's
// metrics, all in the tpu_provisioner_ namespace:
//
//   reconcile_duration_seconds (histogram)   reconciles_total{result}
//   plan_actions_total{kind}                 apply_actions_total{result}
//   api_calls_total{method,code}             operations_in_flight
//   declared_chips{target}  live_chips{target}   target_state{target,state}
//   last_applied_revision{revision} (always 1)   files_parsed_total
//   files_parsed_last_load  history_rewrites_total  refreshes_total
//   fetches_total{result}   webhook_requests_total{result}   ready
//   kueue_declared_chips{flavor}  kueue_ready_chips{flavor}  kueue_nominal_quota{flavor}
//   kueue_syncs_total{result}  kueue_scale_down_waiting{target}
//   kueue_flex_start_bookings{state}
//   kube_watch_lists_total{resource}  kube_watch_errors_total{resource}  leader
//
// A hand-written writer: a dozen metric families do not need a client library.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "daemon/daemon_status.h"

namespace tpu::daemon {

// Counters the loop and HTTP server keep beside DaemonStatus.
struct ExtraMetrics {
  std::map<std::string, int64_t> api_calls;       // "GET 200" → n (cloud::CallCounter)
  int operations_in_flight = 0;
  std::map<std::string, uint64_t> fetches;        // "ok" | "error" → n
  std::map<std::string, uint64_t> webhook_requests;  // "accepted" | "unauthorized" | … → n
  std::map<std::string, uint64_t> kube_watch_lists;   // resource → full lists (1 + re-lists after 410)
  std::map<std::string, uint64_t> kube_watch_errors;  // resource → failed lists/watches
};

std::string MetricsText(const DaemonStatus& status, const ExtraMetrics& extra);

// Escapes a label value: backslash, double quote and newline.
std::string EscapeLabel(const std::string& value);

}  // namespace tpu::daemon
