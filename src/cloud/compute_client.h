// The Compute Engine (compute/v1) calls for TPUNodeGroups: workload policies
// (regional resourcePolicies), instance templates (global) and zonal managed
// instance groups with their instances (list, get, setMetadata, delete),
// reservations (read only: list, get),
// their aggregated lists (one call per page across all
// zones/regions, every page followed), and operations. Mutating calls return
// the Operation Compute started; poll it with GetOperation, or WaitOperation
// (server-side wait, ≤ ~2 minutes, blocks the calling thread: not for the
// executor's hot path).
//
// Thread-safe (stateless over a thread-safe ApiCaller).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cloud/api_caller.h"
#include "cloud/api_error.h"
#include "cloud/types.h"

namespace tpu::cloud {

// Where a Compute operation lives, as its paths spell it: "zones/Z",
// "regions/R" or "global" (from op.scope and op.location).
std::string OperationScopePath(const Operation& op);

class ComputeClient {
 public:
  // Aggregated list page size (the API's maximum).
  static constexpr int kMaxResults = 500;

  // `compute_v1` as in Endpoints ("https://compute.googleapis.com/compute/v1/").
  ComputeClient(ApiCaller* caller, std::string compute_v1)
      : caller_(caller), root_(std::move(compute_v1)) {}

  // Workload policies: policy.region and policy.name must be set.
  ApiResult<Operation> InsertWorkloadPolicy(const std::string& project, const WorkloadPolicy& policy);
  ApiResult<WorkloadPolicy> GetWorkloadPolicy(const std::string& project, const std::string& region,
                                              const std::string& name);
  ApiResult<Operation> DeleteWorkloadPolicy(const std::string& project, const std::string& region,
                                            const std::string& name);

  ApiResult<Operation> InsertInstanceTemplate(const std::string& project, const InstanceTemplate& tmpl);
  ApiResult<InstanceTemplate> GetInstanceTemplate(const std::string& project, const std::string& name);
  ApiResult<Operation> DeleteInstanceTemplate(const std::string& project, const std::string& name);

  // igm.zone and igm.name must be set.
  ApiResult<Operation> InsertInstanceGroupManager(const std::string& project,
                                                  const InstanceGroupManager& igm);
  ApiResult<InstanceGroupManager> GetInstanceGroupManager(const std::string& project,
                                                          const std::string& zone,
                                                          const std::string& name);
  ApiResult<Operation> DeleteInstanceGroupManager(const std::string& project, const std::string& zone,
                                                  const std::string& name);
  ApiResult<Operation> ResizeInstanceGroupManager(const std::string& project, const std::string& zone,
                                                  const std::string& name, int size);

  // A managed instance group's instances (POST …/listManagedInstances), all
  // pages; a group whose instances are not created yet lists them with their
  // names and currentAction CREATING.
  ApiResult<std::vector<ManagedInstance>> ListManagedInstances(const std::string& project,
                                                               const std::string& zone,
                                                               const std::string& mig);
  ApiResult<Instance> GetInstance(const std::string& project, const std::string& zone,
                                  const std::string& name);
  // Replaces the instance's metadata items. `fingerprint` must be the one the
  // last GetInstance saw, else the API answers 412 (error().precondition_failed()):
  // read again and retry. Values may be secrets: an API error message that
  // quotes one has it replaced by "<redacted>".
  ApiResult<Operation> SetInstanceMetadata(const std::string& project, const std::string& zone,
                                           const std::string& name, const std::string& fingerprint,
                                           const std::vector<std::pair<std::string, std::string>>& items);
  ApiResult<Operation> DeleteInstance(const std::string& project, const std::string& zone,
                                      const std::string& name);

  // Aggregated lists, all pages. Resource policies that are not workload
  // policies are skipped.
  ApiResult<std::vector<WorkloadPolicy>> ListWorkloadPolicies(const std::string& project);
  ApiResult<std::vector<InstanceTemplate>> ListInstanceTemplates(const std::string& project);
  ApiResult<std::vector<InstanceGroupManager>> ListInstanceGroupManagers(const std::string& project);
  // Reservations the project owns (aggregated/reservations), all pages. A
  // reservation another project shares with this one is not among them: read
  // it from its owner with GetReservation.
  ApiResult<std::vector<Reservation>> ListReservations(const std::string& project);
  // zones/Z/reservations/N of `project` (the owner, for a shared one).
  ApiResult<Reservation> GetReservation(const std::string& project, const std::string& zone,
                                        const std::string& name);
  // aggregated/operations; with only_running, filter=status!=DONE (also applied
  // client-side in case the server ignores the filter).
  ApiResult<std::vector<Operation>> ListOperations(const std::string& project, bool only_running);
  // The first page (up to kMaxResults) of the operations not DONE, prepared
  // to be sent on an event loop: aggregated/operations, or one scope's
  // ("zones/Z", "regions/R", "global") when `scope` is set. With
  // `filter=status != DONE`, applied client-side too. Unreachable scopes
  // are not an error here: their operations are just not listed.
  Prepared<std::vector<Operation>> PrepareListRunningOperations(const std::string& project,
                                                                const std::string& scope = "");

  // One page of each aggregated list above, prepared for a caller that sends
  // it on an event loop and follows the pages itself, finishing each call (and
  // so parsing its body) on a thread of its own: the refresh (list_fanout.h).
  // The finished call appends the page's items to `out`, which must outlive
  // it, and yields the next page's token, "" after the last page. An empty
  // `page_token` asks for the first page. Each List* above is these, sent.
  Prepared<std::string> PrepareWorkloadPolicyPage(const std::string& project, const std::string& page_token,
                                                  std::vector<WorkloadPolicy>* out);
  Prepared<std::string> PrepareInstanceTemplatePage(const std::string& project, const std::string& page_token,
                                                    std::vector<InstanceTemplate>* out);
  Prepared<std::string> PrepareInstanceGroupManagerPage(const std::string& project, const std::string& page_token,
                                                        std::vector<InstanceGroupManager>* out);
  Prepared<std::string> PrepareReservationPage(const std::string& project, const std::string& page_token,
                                               std::vector<Reservation>* out);
  Prepared<std::string> PrepareOperationPage(const std::string& project, bool only_running,
                                             const std::string& page_token, std::vector<Operation>* out);

  // GET the operation by its scope: op.scope "zones"/"regions"/"global",
  // op.location the zone or region, op.name, op.project.
  ApiResult<Operation> GetOperation(const Operation& op);
  // POST …/operations/O/wait: returns when DONE or after the server's wait limit.
  ApiResult<Operation> WaitOperation(const Operation& op);

  // The calls above that the apply makes, prepared to be sent on an event
  // loop (api_caller.h); each synchronous one is its prepared one, sent.
  Prepared<Operation> PrepareInsertWorkloadPolicy(const std::string& project, const WorkloadPolicy& policy);
  Prepared<Operation> PrepareDeleteWorkloadPolicy(const std::string& project, const std::string& region,
                                                  const std::string& name);
  Prepared<Operation> PrepareInsertInstanceTemplate(const std::string& project, const InstanceTemplate& tmpl);
  Prepared<Operation> PrepareDeleteInstanceTemplate(const std::string& project, const std::string& name);
  Prepared<Operation> PrepareInsertInstanceGroupManager(const std::string& project, const InstanceGroupManager& igm);
  Prepared<Operation> PrepareDeleteInstanceGroupManager(const std::string& project, const std::string& zone,
                                                        const std::string& name);
  Prepared<Operation> PrepareResizeInstanceGroupManager(const std::string& project, const std::string& zone,
                                                        const std::string& name, int size);
  Prepared<Operation> PrepareGetOperation(const Operation& op);

 private:
  std::string Url(const std::string& path) const { return root_ + path; }
  // A list page's URL: at most kMaxResults items, and for an aggregated list
  // no partial success (an unreachable scope is reported, not left out).
  std::string ListPageUrl(const std::string& path, bool aggregated, const std::string& filter,
                          const std::string& page_token) const;
  ApiResult<Operation> CallOperation(const std::string& method, const std::string& path,
                                     const nlohmann::json* body) {
    return SendPrepared(PrepareOperation(method, path, body));
  }
  Prepared<Operation> PrepareOperation(const std::string& method, const std::string& path,
                                       const nlohmann::json* body);
  // One page of aggregated/<collection>, its body handed to `read_page`
  // (list_reader.h), which keeps its items.
  template <typename ReadPage>
  Prepared<std::string> PrepareAggregatedPage(const std::string& project, const std::string& collection,
                                              const std::string& filter, const std::string& page_token,
                                              ReadPage read_page);

  ApiCaller* caller_;
  std::string root_;
};

}  // namespace tpu::cloud
