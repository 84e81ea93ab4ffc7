// KubeAccess and the Kubernetes flags of `watch`: see kube_setup.h.
#include "cli/kube_setup.h"

#include <unistd.h>

#include "cli/duration.h"
#include "kube/kubeconfig.h"

namespace tpu::cli {
namespace {

// The pod's namespace: $POD_NAMESPACE (downward API), else the service
// account's namespace file, else "default".
std::string PodNamespace(const Env& env) {
  if (auto ns = env.Var("POD_NAMESPACE"); ns && !ns->empty()) return *ns;
  auto file = env.ReadFile(std::string(kube::kServiceAccountDir) + "/namespace");
  if (file.ok() && !TrimSpace(*file).empty()) return TrimSpace(*file);
  return "default";
}

std::string Identity(const Env& env) {
  if (auto pod = env.Var("POD_NAME"); pod && !pod->empty()) return *pod;
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) == 0 && host[0]) return host;
  return "tpu-provisioner";
}

Result<std::chrono::milliseconds> Positive(const std::string& flag, const std::string& text) {
  auto d = ParseDuration(text);
  if (!d.ok()) return d.status().WithContext(flag);
  if (d->count() <= 0) return Status::InvalidArgument(flag + ": must be positive");
  return *d;
}

}  // namespace

void AddKubeFlags(CLI::App* cmd, KubeFlags* f) {
  const char* g = "Kubernetes (Kueue quota, leader election, shards)";
  cmd->add_option("--kubeconfig", f->kubeconfig, "Kubeconfig file (else $KUBECONFIG, in-cluster, ~/.kube/config)")
      ->group(g);
  cmd->add_option("--kube-context", f->context, "Kubeconfig context (default: its current-context)")->group(g);
  cmd->add_flag("--in-cluster", f->in_cluster, "Use the pod's service account (KUBERNETES_SERVICE_HOST)")->group(g);
  cmd->add_option("--kube-target", f->target,
                  "PROJECT/CLUSTER: the target whose Cluster.spec.kueue this Kubernetes cluster follows "
                  "(default: the only target with spec.kueue)")
      ->group(g);
  cmd->add_option("--kube-resync-interval", f->resync,
                  "Re-sync quota and re-check held scale-downs at least this often (default 30s)")
      ->group(g);
  cmd->add_option("--node-join-interval", f->node_join_interval,
                  "How often TPUNodeGroup VMs are checked: tokens for RUNNING ones, labels and clean-up for "
                  "joined ones (default 10s)")
      ->group(g);
  cmd->add_flag("--leader-elect", f->leader_elect,
                "Act only while holding a coordination.k8s.io/v1 Lease (several replicas act as one)")
      ->group(g);
  cmd->add_option("--leader-elect-namespace", f->lease_namespace, "Namespace of the Lease (default: the pod's)")
      ->group(g);
  cmd->add_option("--leader-elect-name", f->lease_name, "Name of the Lease (default tpu-provisioner)")->group(g);
  cmd->add_option("--leader-elect-identity", f->identity, "This replica's identity (default: $POD_NAME, else host name)")
      ->group(g);
  cmd->add_option("--leader-elect-lease-duration", f->lease_duration,
                  "How long a lease lasts without renewal before another replica takes it (default 15s)")
      ->group(g);
  cmd->add_option("--leader-elect-renew-deadline", f->renew_deadline,
                  "A leader that could not renew for this long stops acting (default 10s)")
      ->group(g);
  cmd->add_option("--leader-elect-retry-period", f->retry_period, "How often to try to acquire or renew (default 2s)")
      ->group(g);
  cmd->add_option("--shards", f->shards,
                  "Split the targets into N shards, each held through a Lease; every replica reconciles the "
                  "targets of the shards it holds, up to its fair share (docs/scaling.md). Uses the "
                  "--leader-elect-namespace, -name (the Leases' prefix), -identity and timing flags")
      ->check(CLI::Range(1, 4096))
      ->group(g);
  cmd->add_option("--shard-mode", f->shard_mode, "auto: --shards 32 unless --shards says otherwise; off: no shards")
      ->group(g);
}

namespace {

struct LeaseFlags {
  kube::LeaseConfig lease;
  std::chrono::milliseconds retry_period;
};

// The Lease settings --leader-elect and --shards share.
Result<LeaseFlags> ParseLeaseFlags(const KubeFlags& flags, const Env& env) {
  auto duration = Positive("--leader-elect-lease-duration", flags.lease_duration);
  if (!duration.ok()) return duration.status();
  auto renew = Positive("--leader-elect-renew-deadline", flags.renew_deadline);
  if (!renew.ok()) return renew.status();
  auto retry = Positive("--leader-elect-retry-period", flags.retry_period);
  if (!retry.ok()) return retry.status();
  if (*renew >= *duration)
    return Status::InvalidArgument("--leader-elect-renew-deadline must be shorter than --leader-elect-lease-duration");
  if (*retry >= *renew)
    return Status::InvalidArgument("--leader-elect-retry-period must be shorter than --leader-elect-renew-deadline");
  LeaseFlags out{{}, *retry};
  kube::LeaseConfig& lease = out.lease;
  lease.ns = flags.lease_namespace.empty() ? PodNamespace(env) : flags.lease_namespace;
  lease.name = flags.lease_name;
  lease.identity = flags.identity.empty() ? Identity(env) : flags.identity;
  // The Lease counts whole seconds; round up so a short test duration stays > 0.
  lease.lease_duration = std::chrono::ceil<std::chrono::seconds>(*duration);
  lease.renew_deadline = std::chrono::ceil<std::chrono::seconds>(*renew);
  if (lease.renew_deadline >= lease.lease_duration)
    return Status::InvalidArgument("--leader-elect-renew-deadline must be shorter than --leader-elect-lease-duration "
                                   "by at least a second");
  return out;
}

}  // namespace

Result<std::unique_ptr<KubeAccess>> KubeAccess::Open(const KubeFlags& flags) {
  if (!flags.enabled()) return std::unique_ptr<KubeAccess>();
  if (flags.leader_elect && flags.ShardCount() > 0)
    return Status::InvalidArgument("--leader-elect and --shards: choose one (with shards every replica acts, "
                                   "each on the targets of the shards it holds)");
  if (!flags.shard_mode.empty() && flags.shard_mode != "auto" && flags.shard_mode != "off")
    return Status::InvalidArgument("--shard-mode: expected auto or off, got '" + flags.shard_mode + "'");
  std::unique_ptr<KubeAccess> k(new KubeAccess());
  Env& env = k->env_;
  auto resync = Positive("--kube-resync-interval", flags.resync);
  if (!resync.ok()) return resync.status();
  k->resync_ = *resync;
  auto join = Positive("--node-join-interval", flags.node_join_interval);
  if (!join.ok()) return join.status();
  k->node_join_interval_ = *join;
  Result<kube::RestConfig> config = flags.in_cluster
                                        ? kube::InClusterConfig(env)
                                        : kube::LoadDefaultConfig(env, flags.kubeconfig, flags.context);
  if (!config.ok()) return config.status().WithContext("kubernetes");
  k->rest_ = std::make_unique<kube::RestClient>(std::move(config.value()));
  if (!flags.leader_elect && flags.ShardCount() == 0) return k;

  auto lease = ParseLeaseFlags(flags, env);
  if (!lease.ok()) return lease.status();
  k->retry_period_ = lease->retry_period;
  if (flags.leader_elect) {
    k->elector_ = std::make_unique<kube::LeaderElector>(*k->rest_, k->env_, lease->lease);
    k->leader_only_ = std::make_unique<kube::LeaderOnlyClient>(*k->rest_, *k->elector_);
    return k;
  }
  const kube::LeaseConfig& l = lease->lease;
  k->shards_ = std::make_unique<shard::ShardKeeper>(
      *k->rest_, k->env_,
      shard::ShardConfig{l.ns, l.name, l.identity, flags.ShardCount(), l.lease_duration, l.renew_deadline});
  // Kueue quota and demand Events are written by the replica holding the
  // shard of --kube-target; without one, nobody writes them.
  shard::ShardKeeper* keeper = k->shards_.get();
  const std::string target = flags.target;
  k->leader_only_ = std::make_unique<kube::LeaderOnlyClient>(
      *k->rest_, [keeper, target] { return !target.empty() && keeper->OwnsTarget(target); },
      target.empty() ? "with --shards, Kubernetes writes need --kube-target (the holder of its shard writes)"
                     : "this replica does not hold the shard of " + target);
  return k;
}

}  // namespace tpu::cli
