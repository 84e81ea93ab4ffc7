// GkeClient: URLs, bodies and response parsing for container/v1.
#include "cloud/gke_client.h"

#include "cloud/gke_wire.h"
#include "cloud/list_reader.h"

namespace tpu::cloud {

std::string ClusterRef::Path() const {
  return "projects/" + project + "/locations/" + location + "/clusters/" + cluster;
}

std::string NodePoolRef::Path() const { return cluster.Path() + "/nodePools/" + node_pool; }

ApiResult<std::vector<Cluster>> GkeClient::ListClusters(const std::string& project, const std::string& location) {
  return SendPrepared(PrepareListClusters(project, location));
}

Prepared<std::vector<Cluster>> GkeClient::PrepareListClusters(const std::string& project,
                                                              const std::string& location) {
  std::string path = "projects/" + project + "/locations/" + location + "/clusters";
  std::function<ApiResult<std::vector<Cluster>>(ApiResult<std::string>)> read =
      [path, project](ApiResult<std::string> body) -> ApiResult<std::vector<Cluster>> {
    if (!body.ok()) return body.error();
    auto clusters = ReadClusterList(*body, project);
    if (!clusters.ok()) {
      if (clusters.status().code() == Status::Code::kUnavailable) {
        // missingZones: the API answered but could not see everything; retryable.
        ApiError e;
        e.call = "GET " + path;
        e.http_status = 503;
        e.status = "UNAVAILABLE";
        e.message = clusters.status().message();
        return e;
      }
      return ParseFailure("GET " + path, clusters.status());
    }
    return std::move(*clusters);
  };
  return Then<std::vector<Cluster>>(caller_->PrepareRaw(Url(path)), std::move(read));
}

ApiResult<NodePool> GkeClient::GetNodePool(const NodePoolRef& ref) {
  auto j = caller_->Call("GET", Url(ref.Path()));
  if (!j.ok()) return j.error();
  auto pool = NodePoolFromJson(*j);
  if (!pool.ok()) return ParseFailure("GET " + ref.Path(), pool.status());
  return std::move(*pool);
}

Prepared<Operation> GkeClient::PrepareOperation(const std::string& method, const std::string& path,
                                                const std::string& project, const nlohmann::json* body) {
  auto call = body ? caller_->Prepare(method, Url(path), *body) : caller_->Prepare(method, Url(path));
  std::function<ApiResult<Operation>(ApiResult<nlohmann::json>)> parse =
      [what = method + " " + path, project](ApiResult<nlohmann::json> j) -> ApiResult<Operation> {
    if (!j.ok()) return j.error();
    auto op = GkeOperationFromJson(*j, project);
    if (!op.ok()) return ParseFailure(what, op.status());
    return std::move(*op);
  };
  return Then<Operation>(std::move(call), std::move(parse));
}

Prepared<Operation> GkeClient::PrepareCreateNodePool(const ClusterRef& cluster, const NodePool& pool) {
  auto body = CreateNodePoolBody(pool);
  return PrepareOperation("POST", cluster.Path() + "/nodePools", cluster.project, &body);
}

Prepared<Operation> GkeClient::PrepareUpdateNodePool(const NodePoolRef& ref, const NodePoolUpdate& update) {
  auto body = UpdateNodePoolBody(update);
  return PrepareOperation("PUT", ref.Path(), ref.cluster.project, &body);
}

Prepared<Operation> GkeClient::PrepareDeleteNodePool(const NodePoolRef& ref) {
  return PrepareOperation("DELETE", ref.Path(), ref.cluster.project, nullptr);
}

Prepared<Operation> GkeClient::PrepareSetNodePoolSize(const NodePoolRef& ref, int node_count) {
  auto body = SetNodePoolSizeBody(node_count);
  return PrepareOperation("POST", ref.Path() + ":setSize", ref.cluster.project, &body);
}

Prepared<Operation> GkeClient::PrepareSetNodePoolAutoscaling(const NodePoolRef& ref, const NodePoolAutoscaling& a) {
  auto body = SetNodePoolAutoscalingBody(a);
  return PrepareOperation("POST", ref.Path() + ":setAutoscaling", ref.cluster.project, &body);
}

Prepared<Operation> GkeClient::PrepareSetNodePoolManagement(const NodePoolRef& ref, const NodeManagement& m) {
  auto body = SetNodePoolManagementBody(m);
  return PrepareOperation("POST", ref.Path() + ":setManagement", ref.cluster.project, &body);
}

Prepared<Operation> GkeClient::PrepareGetOperation(const std::string& project, const std::string& location,
                                                   const std::string& name) {
  std::function<ApiResult<Operation>(ApiResult<Operation>)> fill = [location](ApiResult<Operation> op) {
    if (op.ok() && op->location.empty()) op->location = location;
    return op;
  };
  return Then<Operation>(
      PrepareOperation("GET", "projects/" + project + "/locations/" + location + "/operations/" + name, project,
                       nullptr),
      std::move(fill));
}

ApiResult<Operation> GkeClient::CreateNodePool(const ClusterRef& cluster, const NodePool& pool) {
  return SendPrepared(PrepareCreateNodePool(cluster, pool));
}

ApiResult<Operation> GkeClient::UpdateNodePool(const NodePoolRef& ref, const NodePoolUpdate& update) {
  return SendPrepared(PrepareUpdateNodePool(ref, update));
}

ApiResult<Operation> GkeClient::DeleteNodePool(const NodePoolRef& ref) { return SendPrepared(PrepareDeleteNodePool(ref)); }

ApiResult<Operation> GkeClient::SetNodePoolSize(const NodePoolRef& ref, int node_count) {
  return SendPrepared(PrepareSetNodePoolSize(ref, node_count));
}

ApiResult<Operation> GkeClient::SetNodePoolAutoscaling(const NodePoolRef& ref, const NodePoolAutoscaling& a) {
  return SendPrepared(PrepareSetNodePoolAutoscaling(ref, a));
}

ApiResult<Operation> GkeClient::SetNodePoolManagement(const NodePoolRef& ref, const NodeManagement& m) {
  return SendPrepared(PrepareSetNodePoolManagement(ref, m));
}

ApiResult<Operation> GkeClient::GetOperation(const std::string& project, const std::string& location,
                                             const std::string& name) {
  return SendPrepared(PrepareGetOperation(project, location, name));
}

ApiResult<std::vector<Operation>> GkeClient::ListOperations(const std::string& project, const std::string& location) {
  return SendPrepared(PrepareListOperations(project, location));
}

Prepared<std::vector<Operation>> GkeClient::PrepareListOperations(const std::string& project,
                                                                  const std::string& location) {
  std::string path = "projects/" + project + "/locations/" + location + "/operations";
  return Then<std::vector<Operation>>(
      caller_->PrepareRaw(Url(path)),
      std::function<ApiResult<std::vector<Operation>>(ApiResult<std::string>)>(
          [project, path](ApiResult<std::string> body) -> ApiResult<std::vector<Operation>> {
            if (!body.ok()) return body.error();
            auto ops = ReadGkeOperationList(*body, project);
            if (!ops.ok()) return ParseFailure("GET " + path, ops.status());
            return std::move(*ops);
          }));
}

}  // namespace tpu::cloud
