// The `watch` daemon assembled: the reconciler, its loop, the webhook and the
// HTTP endpoints, and with Kubernetes the Kueue port, demand-driven pools, the
// Node and Workload watches and the leader Lease, wired to one another in one
// place a test can build (docs/architecture.md, "The daemon"). The command
// line (cli/cmd_watch.cc) only turns flags into the pieces below and signals
// into Stop() and Reload().
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "cloud/cloud.h"
#include "daemon/clock.h"
#include "daemon/cloud_port.h"
#include "daemon/daemon_loop.h"
#include "daemon/demand_port.h"
#include "daemon/git_webhook.h"
#include "daemon/http_server.h"
#include "daemon/kube_threads.h"
#include "daemon/kueue_port.h"
#include "daemon/node_join_thread.h"
#include "daemon/notifier.h"
#include "daemon/reconciler.h"
#include "daemon/shard_thread.h"
#include "daemon/waiter.h"
#include "demand/controller.h"
#include "kube/client.h"
#include "kube/timestamps.h"
#include "kube/leader_election.h"
#include "source/revision_source.h"

namespace tpu::daemon {

// The Kubernetes cluster `watch` talks to; everything must outlive the Daemon.
struct DaemonKube {
  kube::KubeClient* reader = nullptr;
  kube::KubeClient* writer = nullptr;   // leader-only with leader election
  Clock* clock = nullptr;
  kube::LeaderElector* elector = nullptr;  // null: no leader election
  // Null: not sharded. Otherwise this replica reconciles only the targets of
  // the shards it holds (docs/scaling.md); no leader election then.
  shard::ShardKeeper* shards = nullptr;
  std::chrono::milliseconds resync{30000};
  std::chrono::milliseconds retry_period{2000};
  // How often TPUNodeGroup VMs are checked for joining (node_join_thread.h).
  std::chrono::milliseconds node_join_interval{10000};
};

struct DaemonOptions {
  ReconcilerOptions reconciler;  // its kueue, demand and events are filled in here
  std::chrono::milliseconds poll_interval{std::chrono::seconds(60)};
  apply::ExecuteOptions execute;  // the executor of each apply (parallelism, polling)
  std::string listen = "127.0.0.1:8080";
  std::string webhook_secret;
  // Re-reads the webhook secret on Reload(); empty: the secret stays.
  std::function<Result<std::string>()> reload_webhook_secret;
};

class Daemon {
 public:
  // `kube` null: no Kubernetes. Every pointer must outlive the Daemon.
  Daemon(source::RevisionSource* source, Waiter* waiter, cloud::CloudConnection* connection, EventSink* events,
         const DaemonKube* kube, DaemonOptions options);
  ~Daemon();

  // Binds the HTTP endpoints and starts the Kubernetes threads.
  Status Start();
  // Runs the loop until Stop(), then stops every thread (the watches at once,
  // the Lease given up). False when it stopped because the Lease was lost.
  bool Run();
  // From any thread (a signal): stop, or re-read the secret and re-check everything.
  void Stop() { loop_->RequestStop(); }
  void Reload() { loop_->RequestReload(); }
  int port() const { return http_ ? http_->port() : 0; }

 private:
  DaemonStatus Status_() const;
  ExtraMetrics Metrics() const;
  void StartKube();

  source::RevisionSource* source_;
  cloud::CloudConnection* connection_;
  const DaemonKube* kube_;
  DaemonOptions options_;
  Clock& clock_ = Env::Default();
  ConnectionCloud cloud_;
  std::unique_ptr<KubeKueue> kueue_;
  std::unique_ptr<demand::Controller> demand_controller_;
  std::unique_ptr<DemandPort> demand_;
  std::unique_ptr<Reconciler> reconciler_;
  std::unique_ptr<DaemonLoop> loop_;
  GitWebhook webhook_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<ResourceWatch> node_watch_, workload_watch_;
  std::unique_ptr<LeaseKeeper> lease_;
  std::unique_ptr<ShardThread> shard_thread_;
  std::unique_ptr<NodeJoinThread> node_join_;
  std::atomic<bool> lost_lease_{false};
};

}  // namespace tpu::daemon
