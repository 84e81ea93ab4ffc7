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
  std::string path = "projects/" + project + "/locations/" + location + "/clusters";
  auto body = caller_->CallRaw(Url(path));
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
}

ApiResult<NodePool> GkeClient::GetNodePool(const NodePoolRef& ref) {
  auto j = caller_->Call("GET", Url(ref.Path()));
  if (!j.ok()) return j.error();
  auto pool = NodePoolFromJson(*j);
  if (!pool.ok()) return ParseFailure("GET " + ref.Path(), pool.status());
  return std::move(*pool);
}

ApiResult<Operation> GkeClient::CallOperation(const std::string& method, const std::string& path,
                                              const std::string& project, const nlohmann::json* body) {
  auto j = body ? caller_->Call(method, Url(path), *body) : caller_->Call(method, Url(path));
  if (!j.ok()) return j.error();
  auto op = GkeOperationFromJson(*j, project);
  if (!op.ok()) return ParseFailure(method + " " + path, op.status());
  return std::move(*op);
}

ApiResult<Operation> GkeClient::CreateNodePool(const ClusterRef& cluster, const NodePool& pool) {
  auto body = CreateNodePoolBody(pool);
  return CallOperation("POST", cluster.Path() + "/nodePools", cluster.project, &body);
}

ApiResult<Operation> GkeClient::UpdateNodePool(const NodePoolRef& ref, const NodePoolUpdate& update) {
  auto body = UpdateNodePoolBody(update);
  return CallOperation("PUT", ref.Path(), ref.cluster.project, &body);
}

ApiResult<Operation> GkeClient::DeleteNodePool(const NodePoolRef& ref) {
  return CallOperation("DELETE", ref.Path(), ref.cluster.project, nullptr);
}

ApiResult<Operation> GkeClient::SetNodePoolSize(const NodePoolRef& ref, int node_count) {
  auto body = SetNodePoolSizeBody(node_count);
  return CallOperation("POST", ref.Path() + ":setSize", ref.cluster.project, &body);
}

ApiResult<Operation> GkeClient::SetNodePoolAutoscaling(const NodePoolRef& ref, const NodePoolAutoscaling& a) {
  auto body = SetNodePoolAutoscalingBody(a);
  return CallOperation("POST", ref.Path() + ":setAutoscaling", ref.cluster.project, &body);
}

ApiResult<Operation> GkeClient::SetNodePoolManagement(const NodePoolRef& ref, const NodeManagement& m) {
  auto body = SetNodePoolManagementBody(m);
  return CallOperation("POST", ref.Path() + ":setManagement", ref.cluster.project, &body);
}

ApiResult<Operation> GkeClient::GetOperation(const std::string& project, const std::string& location,
                                             const std::string& name) {
  auto op = CallOperation("GET", "projects/" + project + "/locations/" + location + "/operations/" + name,
                          project, nullptr);
  if (op.ok() && op->location.empty()) op->location = location;
  return op;
}

ApiResult<std::vector<Operation>> GkeClient::ListOperations(const std::string& project, const std::string& location) {
  std::string path = "projects/" + project + "/locations/" + location + "/operations";
  auto body = caller_->CallRaw(Url(path));
  if (!body.ok()) return body.error();
  auto ops = ReadGkeOperationList(*body, project);
  if (!ops.ok()) return ParseFailure("GET " + path, ops.status());
  return std::move(*ops);
}

}  // namespace tpu::cloud
