// The GKE (container.googleapis.com/v1) calls plan and apply need: list every
// cluster of a project with node pools embedded, the node pool verbs, and
// operations. Mutating calls return the Operation GKE started; the caller polls
// it with GetOperation (see operation_poll.h) rather than blocking on it.
//
// Thread-safe (stateless over a thread-safe ApiCaller).
#pragma once

#include <string>
#include <vector>

#include "cloud/api_caller.h"
#include "cloud/api_error.h"
#include "cloud/types.h"

namespace tpu::cloud {

struct ClusterRef {
  std::string project;
  std::string location;  // zone or region
  std::string cluster;
  // "projects/P/locations/L/clusters/C"
  std::string Path() const;
};

struct NodePoolRef {
  ClusterRef cluster;
  std::string node_pool;
  // "projects/P/locations/L/clusters/C/nodePools/N"
  std::string Path() const;
};

class GkeClient {
 public:
  // `container_root` as in Endpoints ("https://container.googleapis.com/").
  GkeClient(ApiCaller* caller, std::string container_root)
      : caller_(caller), root_(std::move(container_root)) {}

  // GET v1/projects/P/locations/-/clusters (or one location): every cluster
  // with its node pools, in one call.
  ApiResult<std::vector<Cluster>> ListClusters(const std::string& project,
                                               const std::string& location = "-");

  ApiResult<NodePool> GetNodePool(const NodePoolRef& ref);
  // POST …/nodePools {"nodePool": …}; node_count is sent as initialNodeCount.
  ApiResult<Operation> CreateNodePool(const ClusterRef& cluster, const NodePool& pool);
  // PUT …/nodePools/N with the wrapper objects of NodePoolUpdate.
  ApiResult<Operation> UpdateNodePool(const NodePoolRef& ref, const NodePoolUpdate& update);
  ApiResult<Operation> DeleteNodePool(const NodePoolRef& ref);
  ApiResult<Operation> SetNodePoolSize(const NodePoolRef& ref, int node_count);
  ApiResult<Operation> SetNodePoolAutoscaling(const NodePoolRef& ref, const NodePoolAutoscaling& autoscaling);
  ApiResult<Operation> SetNodePoolManagement(const NodePoolRef& ref, const NodeManagement& management);

  // GET v1/projects/P/locations/L/operations/O.
  ApiResult<Operation> GetOperation(const std::string& project, const std::string& location,
                                    const std::string& name);

  // The calls above that the apply makes, prepared to be sent on an event
  // loop (api_caller.h); each synchronous one is its prepared one, sent.
  Prepared<Operation> PrepareCreateNodePool(const ClusterRef& cluster, const NodePool& pool);
  Prepared<Operation> PrepareUpdateNodePool(const NodePoolRef& ref, const NodePoolUpdate& update);
  Prepared<Operation> PrepareDeleteNodePool(const NodePoolRef& ref);
  Prepared<Operation> PrepareSetNodePoolSize(const NodePoolRef& ref, int node_count);
  Prepared<Operation> PrepareSetNodePoolAutoscaling(const NodePoolRef& ref, const NodePoolAutoscaling& autoscaling);
  Prepared<Operation> PrepareSetNodePoolManagement(const NodePoolRef& ref, const NodeManagement& management);
  Prepared<Operation> PrepareGetOperation(const std::string& project, const std::string& location,
                                          const std::string& name);
  // GET v1/projects/P/locations/-/operations: the project's recent operations,
  // done or not (filter on !done() for the running ones).
  ApiResult<std::vector<Operation>> ListOperations(const std::string& project,
                                                   const std::string& location = "-");
  // ListClusters and ListOperations, prepared to be sent on an event loop and
  // finished (their body parsed) on the caller's thread: the refresh
  // (list_fanout.h) and the apply's batched polls. Neither pages.
  Prepared<std::vector<Cluster>> PrepareListClusters(const std::string& project, const std::string& location = "-");
  Prepared<std::vector<Operation>> PrepareListOperations(const std::string& project,
                                                         const std::string& location = "-");

 private:
  std::string Url(const std::string& path) const { return root_ + "v1/" + path; }
  Prepared<Operation> PrepareOperation(const std::string& method, const std::string& path,
                                       const std::string& project, const nlohmann::json* body);

  ApiCaller* caller_;
  std::string root_;
};

}  // namespace tpu::cloud
