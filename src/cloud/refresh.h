// Live state in O(projects) calls (docs/emulator.md, issue 4): per project one
// GET v1/projects/P/locations/-/clusters (node pools embedded) and one
// aggregated list per Compute collection (resourcePolicies, instanceTemplates,
// instanceGroupManagers), every page followed. Running operations are listed
// only when asked (apply's crash recovery): + GKE locations/-/operations and
// Compute aggregated/operations. Plan's refresh is therefore 4 calls per
// project, plus one per extra page of a Compute collection beyond 500 items.
//
// A node pool's live node_count is the targetSize of the instance groups GKE
// made for it (its instanceGroupUrls), found in the aggregated IGM list; those
// GKE-made IGMs are then left out of instance_group_managers. Without the
// Compute lists node_count is the pool's initialNodeCount.
//
// Reservations (include_reservations, off by default): one aggregated
// reservations list per project (+1 call per extra page), and then, once for
// the whole refresh, one GET per distinct reservation of another project that
// a refreshed project's pools or templates name (projects/OWNER/reservations/N)
// whose OWNER is not itself refreshed; an owner that is refreshed gives its
// listed copy, no call. The list is read whether or not anything names a
// reservation yet: a plan needs a reservation's free VMs before the first
// pool goes into it, and refresh cannot see desired state. A shared
// reservation its owner hides (403, 404) is left out, not an error.
//
// Retryable failures of a list call are retried (RefreshOptions::read_attempts),
// so a 503 or a dropped connection does not fail a whole plan.
//
// No thread of its own: every project's lists are submitted at once to the
// transport's event loop (list_fanout.h), at most `parallelism` calls in
// flight, and the calling thread parses each answer as it comes, follows the
// pages, waits out the retries' backoff, and assembles the projects.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "cloud/compute_client.h"
#include "cloud/gke_client.h"
#include "cloud/operation_poll.h"
#include "cloud/shared_reservations.h"
#include "cloud/types.h"

namespace tpu::cloud {

struct RefreshOptions {
  bool include_compute = true;      // false: skip the three Compute lists (no TPUNodeGroups)
  bool include_operations = false;  // fill ProjectState::running_operations
  bool include_reservations = false;  // fill ProjectState::reservations (see above)
  // By project: reservations of other projects that its manifests name (not
  // yet consumed by anything live), read like those its live resources name.
  std::map<std::string, std::vector<ReservationRef>> named_reservations;
  // List calls in flight at once, across all projects: enough by default for
  // 50 projects' 4-5 lists to be read together. A call waiting for a place
  // costs no thread; the HTTP loop may still queue it for a connection.
  int parallelism = 256;
  // A list call that fails with a retryable error (429, 5xx, a dropped
  // connection), on any of its pages, is made again from its first page, up to
  // `read_attempts` times in all, after a backoff with full jitter that honours
  // Retry-After. The other lists go on meanwhile: the backoff is a timer.
  int read_attempts = 5;
  RetrySchedule read_retry{std::chrono::milliseconds(200), std::chrono::milliseconds(10'000)};
  // The backoff's time: slept on when nothing else is in flight, so a fake
  // clock moves on at once instead of a test waiting.
  Clock* clock = &Env::Default();
};

// Fails with the first project's error, context "refresh project P".
Result<LiveState> Refresh(GkeClient& gke, ComputeClient& compute,
                          const std::vector<std::string>& projects,
                          const RefreshOptions& options = {});

// One project, its lists read at once like Refresh's. Its reservations are the
// ones it owns: Refresh adds those of other projects.
ApiResult<ProjectState> RefreshProject(GkeClient& gke, ComputeClient& compute,
                                       const std::string& project, const RefreshOptions& options);

}  // namespace tpu::cloud
