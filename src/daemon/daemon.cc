// Daemon: see daemon.h. The members point at one another through `this`, so
// nothing needs a forward pointer: every thread that calls back into the loop
// starts in Start(), after the loop exists, and stops in Run() before it goes.
#include "daemon/daemon.h"

#include <spdlog/spdlog.h>

#include "kube/resource.h"
#include "kueue/versions.h"

namespace tpu::daemon {
namespace {

// A sharded replica plans, applies and reports only the targets it owns, and
// checks it still owns one before every mutating call.
DaemonOptions Sharded(DaemonOptions options, const DaemonKube* kube) {
  if (!kube || !kube->shards) return options;
  shard::ShardKeeper* keeper = kube->shards;
  auto owns = [keeper](const std::string& key) { return keeper->OwnsTarget(key); };
  options.reconciler.owns = owns;
  options.execute.may_mutate = owns;
  return options;
}

}  // namespace

Daemon::Daemon(source::RevisionSource* source, Waiter* waiter, cloud::CloudConnection* connection,
               EventSink* events, const DaemonKube* kube, DaemonOptions options)
    : source_(source), connection_(connection), kube_(kube), options_(Sharded(std::move(options), kube)),
      cloud_(connection, options_.execute), webhook_([this] { loop_->RequestFetch(); }) {
  ReconcilerOptions ro = options_.reconciler;
  ro.events = events;
  if (kube_) {
    kueue_ = std::make_unique<KubeKueue>(*kube_->writer, *kube_->clock);
    ro.kueue = kueue_.get();
    ro.kueue_resync = kube_->resync;
    // Demand-driven pools for JobSets: the controller watches Pods and JobSets,
    // the port hands its actions to the reconciler's executor runs.
    demand::ControllerOptions dco;
    dco.watch_timeout_seconds = 300;  // a stop cancels the open watch; it does not wait for its end
    dco.record_events = !ro.dry_run;
    demand_controller_ = std::make_unique<demand::Controller>(*kube_->reader, *kube_->writer, *kube_->clock, dco,
                                                              [this] { loop_->RequestWake(); });
    demand_ = std::make_unique<DemandPort>(*demand_controller_, *kube_->clock, clock_, ro.kube_target);
    ro.demand = demand_.get();
    // TPUNodeGroup VMs join as nodes: only the replica that may write to
    // Kubernetes for the target hands out tokens, and never under --dry-run.
    if (!ro.dry_run) {
      node_join_ = std::make_unique<NodeJoinThread>(
          *kube_->writer, connection_->compute(), kube_->node_join_interval, [this](const std::string& key) {
            if (kube_->shards) return kube_->shards->OwnsTarget(key);
            return !kube_->elector || (lease_ && lease_->leader());
          });
      ro.nodes = node_join_.get();
    }
  }
  reconciler_ = std::make_unique<Reconciler>(source, &cloud_, &clock_, ro);

  LoopOptions lo;
  lo.poll_interval = options_.poll_interval;
  lo.on_reload = [this] {
    if (!options_.reload_webhook_secret) return;
    auto s = options_.reload_webhook_secret();
    if (!s.ok()) spdlog::warn("reload: {}", s.status().ToString());
    else webhook_.SetSecret(*s);
  };
  if (kube_ && kube_->elector) {
    lo.may_act = [this] { return lease_ && lease_->leader(); };
    lo.standby_recheck = kube_->retry_period;
  }
  loop_ = std::make_unique<DaemonLoop>(reconciler_.get(), source, waiter, &clock_, lo);
  webhook_.SetSecret(options_.webhook_secret);
}

Daemon::~Daemon() = default;

DaemonStatus Daemon::Status_() const {
  DaemonStatus s = reconciler_->Snapshot();
  if (demand_) s.demand = demand_->Snapshot();
  if (node_join_) s.node_groups = node_join_->Snapshot();
  if (kube_ && kube_->elector) {
    const auto& c = kube_->elector->config();
    s.leader = {true, lease_ && lease_->leader(), c.identity, c.ns + "/" + c.name};
    // A follower is ready: it serves, and takes over when the lease expires.
    if (!s.leader.leader) s.ready = true;
  }
  if (kube_ && kube_->shards) {
    const shard::ShardSnapshot k = kube_->shards->Snapshot();
    s.shards = {true, kube_->shards->config().identity, kube_->shards->config().shards, k.held,
                k.live_replicas, k.fair_share, static_cast<int>(s.targets.size()), k.acquired, k.takeovers,
                k.released, k.lost, k.errors, k.last_error};
  }
  return s;
}

ExtraMetrics Daemon::Metrics() const {
  ExtraMetrics m;
  if (node_watch_) {
    m.kube_watch_lists["nodes"] = node_watch_->lists();
    m.kube_watch_errors["nodes"] = node_watch_->errors();
  }
  if (workload_watch_) {
    m.kube_watch_lists["workloads"] = workload_watch_->lists();
    m.kube_watch_errors["workloads"] = workload_watch_->errors();
  }
  m.api_calls = connection_->calls().ByMethodAndCode();
  m.operations_in_flight = cloud_.OperationsInFlight();
  m.fetches = loop_->FetchCounts();
  m.webhook_requests = webhook_.Counts();
  return m;
}

Status Daemon::Start() {
  HttpHandlers handlers;
  handlers.status = [this] { return Status_(); };
  handlers.extra_metrics = [this] { return Metrics(); };
  handlers.webhook = &webhook_;
  auto http = HttpServer::Start(options_.listen, handlers);
  if (!http.ok()) return http.status();
  http_ = std::move(http.value());
  if (kube_) StartKube();
  return Status::OK();
}

void Daemon::StartKube() {
  node_watch_ = std::make_unique<ResourceWatch>(*kube_->reader, NodeWatchOptions(), [this] {
    reconciler_->NoteKubeChange();
    loop_->RequestWake();
  });
  node_watch_->Start();
  // Workloads are watched, not listed on every pass that re-asks a held scale-down.
  ResourceWatch::Options wo;
  wo.name = "workloads";
  wo.resolve = [this] { return kueue::DiscoverKueueResource(*kube_->reader, kube::resources::kWorkloads); };
  wo.keep_objects = true;
  workload_watch_ = std::make_unique<ResourceWatch>(*kube_->reader, wo, nullptr);
  kueue_->SetWorkloadSource([this] { return workload_watch_->Objects(); });
  workload_watch_->Start();
  demand_controller_->Start();
  if (node_join_) node_join_->Start();
  if (kube_->shards) {
    shard_thread_ = std::make_unique<ShardThread>(*kube_->shards, kube_->retry_period,
                                                  [this] { loop_->RequestFullPass(); });
    spdlog::info("shards: {} joining shard set {}/{} ({} shards)", kube_->shards->config().identity,
                 kube_->shards->config().ns, kube_->shards->config().base, kube_->shards->config().shards);
    shard_thread_->Start();
  }
  if (!kube_->elector) return;
  lease_ = std::make_unique<LeaseKeeper>(
      *kube_->elector, kube_->retry_period, [this] { loop_->RequestFullPass(); },
      [this] {
        // As client-go does: stop, and let a restart re-join the election,
        // rather than risk acting beside the new leader.
        lost_lease_ = true;
        loop_->RequestStop();
      });
  const auto& c = kube_->elector->config();
  spdlog::info("leader election: {} competing for lease {}/{}", c.identity, c.ns, c.name);
  lease_->Start();
}

bool Daemon::Run() {
  loop_->Run();
  // Every watch is cancelled together, the Node watch first (it would
  // otherwise open a fresh stream), so none holds the exit for its timeout.
  if (node_watch_) node_watch_->RequestStop();
  if (workload_watch_) workload_watch_->RequestStop();
  if (demand_controller_) demand_controller_->RequestStop();
  if (node_join_) node_join_->Stop();  // before the Lease goes: no write after it
  if (lease_) lease_->Stop();  // gives the lease up for the next replica
  if (shard_thread_) shard_thread_->Stop();  // and the shards, once no apply of ours runs
  if (node_watch_) node_watch_->Stop();
  if (workload_watch_) workload_watch_->Stop();
  if (demand_controller_) demand_controller_->Stop();
  if (http_) http_->Stop();
  return !lost_lease_;
}

}  // namespace tpu::daemon
