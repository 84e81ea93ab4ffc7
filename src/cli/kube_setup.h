// Kubernetes access for `watch` (docs/architecture.md, "Beside Kueue"): the
// flags, the client (kubeconfig or in-cluster service account), and either
// leader election with a coordination.k8s.io/v1 Lease or shards held through
// Leases (docs/scaling.md). Without any of these flags `watch` runs without
// Kubernetes.
//
// Everything that may write to Kubernetes gets writer(): with --leader-elect
// it is a LeaderOnlyClient, so a replica that does not hold the Lease can
// never write; with --shards, one that writes only while holding the shard of
// --kube-target. Reads may use reader().
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "base/env.h"
#include "base/status.h"
#include "kube/client.h"
#include "kube/timestamps.h"
#include "kube/leader_election.h"
#include "kube/leader_only_client.h"
#include "kube/rest_client.h"
#include "shard/shard_keeper.h"

namespace tpu::cli {

struct KubeFlags {
  std::string kubeconfig;     // --kubeconfig (else $KUBECONFIG, in-cluster, ~/.kube/config)
  std::string context;        // --kube-context
  bool in_cluster = false;    // --in-cluster: the pod's service account only
  std::string target;         // --kube-target PROJECT/CLUSTER
  std::string resync = "30s"; // --kube-resync-interval
  std::string node_join_interval = "10s";  // --node-join-interval
  bool leader_elect = false;
  std::string lease_namespace;  // default: the pod's namespace, else "default"
  std::string lease_name = "tpu-provisioner";
  std::string identity;         // default: $POD_NAME, else the host name
  std::string lease_duration = "15s";
  std::string renew_deadline = "10s";
  std::string retry_period = "2s";
  int shards = 0;          // --shards N
  std::string shard_mode;  // --shard-mode auto: kAutoShards unless --shards says otherwise; off: none

  int ShardCount() const {
    if (shard_mode == "off") return 0;
    return shards > 0 ? shards : shard_mode == "auto" ? kAutoShards : 0;
  }
  // Enough for 32 replicas, and fine enough that targets spread evenly over 3.
  static constexpr int kAutoShards = 32;

  // Any Kubernetes flag given: `watch` talks to a cluster.
  bool enabled() const {
    return !kubeconfig.empty() || !context.empty() || in_cluster || !target.empty() || leader_elect || ShardCount() > 0;
  }
};

void AddKubeFlags(CLI::App* cmd, KubeFlags* flags);

class KubeAccess {
 public:
  // Null (and OK) when flags.enabled() is false.
  static Result<std::unique_ptr<KubeAccess>> Open(const KubeFlags& flags);

  kube::KubeClient& reader() { return *rest_; }
  kube::KubeClient& writer() { return leader_only_ ? static_cast<kube::KubeClient&>(*leader_only_) : *rest_; }
  kube::LeaderElector* elector() { return elector_.get(); }  // null without --leader-elect
  shard::ShardKeeper* shards() { return shards_.get(); }     // null without --shards
  Clock& clock() { return env_; }
  std::chrono::milliseconds resync() const { return resync_; }
  std::chrono::milliseconds retry_period() const { return retry_period_; }
  std::chrono::milliseconds node_join_interval() const { return node_join_interval_; }
  const std::string& server() const { return rest_->config().server; }

 private:
  KubeAccess() = default;
  Env& env_ = Env::Default();  // before rest_: exec token sources hold it
  std::unique_ptr<kube::RestClient> rest_;
  std::unique_ptr<kube::LeaderElector> elector_;
  std::unique_ptr<shard::ShardKeeper> shards_;
  std::unique_ptr<kube::LeaderOnlyClient> leader_only_;
  std::chrono::milliseconds resync_{30000};
  std::chrono::milliseconds retry_period_{2000};
  std::chrono::milliseconds node_join_interval_{10000};
};

}  // namespace tpu::cli
