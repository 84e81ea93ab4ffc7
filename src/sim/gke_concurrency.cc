// GKE's concurrent-operation rules (see gke_concurrency.h).
#include "sim/gke_concurrency.h"

namespace tpu::sim {
namespace {

bool ClusterLevel(const OpRecord& op) { return op.target_key == op.cluster_key; }

// What an operation is doing, in the words GKE's refusals use
// ("Operation O is currently deleting a node pool for cluster C").
std::string Doing(const OpRecord& op) {
  const std::string type = op.wire.value("operationType", "");
  if (type == "CREATE_NODE_POOL") return "creating a node pool";
  if (type == "DELETE_NODE_POOL") return "deleting a node pool";
  if (type == "SET_NODE_POOL_SIZE") return "resizing a node pool";
  if (type == "UPGRADE_NODES") return "upgrading a node pool";
  return "updating a node pool";
}

std::string ClusterName(const std::string& cluster_key) {
  return cluster_key.substr(cluster_key.rfind('/') + 1);
}

std::string Name(const OpRecord& op) { return op.wire.value("name", ""); }

}  // namespace

std::optional<ApiError> RefusePoolOperation(const CloudState& state, const std::string& cluster_key,
                                            const std::string& pool_key, int quota) {
  int running = 0;
  const OpRecord* cluster_op = nullptr;
  const OpRecord* pool_op = nullptr;
  for (const OpRecord* op : state.live_ops) {
    if (op->compute || op->done || op->cluster_key != cluster_key) continue;
    if (ClusterLevel(*op)) {
      if (!cluster_op || op->start_ms < cluster_op->start_ms) cluster_op = op;
      continue;
    }
    ++running;
    if (op->target_key == pool_key && (!pool_op || op->start_ms < pool_op->start_ms)) pool_op = op;
  }
  if (cluster_op)
    return FailedPrecondition("Cluster is running incompatible operation " + Name(*cluster_op) + ".");
  if (pool_op) {
    return FailedPrecondition("Operation " + Name(*pool_op) + " is currently " + Doing(*pool_op) +
                              " for cluster " + ClusterName(cluster_key) +
                              ". Please wait and try again once it is done.");
  }
  if (running >= quota) {
    return TooManyRequests("Too many operations: cluster \"" + ClusterName(cluster_key) +
                           "\" hits the concurrent operations quota " + std::to_string(quota) +
                           ", please try again later.");
  }
  return std::nullopt;
}

std::optional<ApiError> RefuseClusterOperation(const CloudState& state,
                                               const std::string& cluster_key) {
  const OpRecord* oldest = nullptr;
  for (const OpRecord* op : state.live_ops)
    if (!op->compute && !op->done && op->cluster_key == cluster_key &&
        (!oldest || op->start_ms < oldest->start_ms))
      oldest = op;
  if (!oldest) return std::nullopt;
  return FailedPrecondition("Cluster is running incompatible operation " + Name(*oldest) + ".");
}

int RunningOperationsOn(const CloudState& state, const std::string& cluster_key) {
  int n = 0;
  for (const OpRecord* op : state.live_ops)
    if (!op->compute && !op->done && op->cluster_key == cluster_key) ++n;
  return n;
}

}  // namespace tpu::sim
