// `tpu-provisioner watch`: the GitOps daemon (docs/architecture.md, "The daemon", issue 6). Wires the
// pieces of src/daemon/ together — a revision source (local checkout, its
// working tree, or a remote clone), the cloud (cloud_setup.h), the reconciler,
// the main loop, the HTTP endpoints and the signals — and runs until SIGTERM
// or SIGINT. With Kubernetes flags (kube_setup.h) it also keeps Kueue quota
// following capacity, gates scale-downs on admitted workloads, and acts only
// while it holds the leader Lease, and makes node pools for pending JobSets
// under the target's Cluster.spec.demand (src/demand/). Exit 0 after a clean
// stop, 1 when it cannot start or when it lost the Lease (a restart re-joins
// the election).
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/spdlog.h>

#include "base/signal_watcher.h"
#include "base/version.h"
#include "cli/cloud_setup.h"
#include "cli/commands.h"
#include "cli/duration.h"
#include "cli/flag_files.h"
#include "cli/kube_setup.h"
#include "cli/log_format.h"
#include "cli/notify_setup.h"
#include "daemon/daemon.h"
#include "daemon/http_server.h"
#include "daemon/shutdown_watchdog.h"
#include "daemon/waiter.h"
#include "manifest/loader.h"
#include "source/child_fetch.h"
#include "source/git_sources.h"
#include "source/remote_source.h"
#include "source/watcher.h"

namespace tpu::cli {
namespace {

// SIGTERM and SIGINT stop, SIGHUP reloads.
const std::vector<int> kWatchSignals = {SIGTERM, SIGINT, SIGHUP};

// The environment variable holding the webhook secret when no file is given.
constexpr const char* kWebhookSecretEnv = "TPU_PROVISIONER_WEBHOOK_SECRET";

struct WatchFlags {
  std::string repo;
  std::string ref = "main";
  std::string workdir;
  bool worktree = false;
  std::string poll_interval = "60s";
  std::string drift_interval = "5m";
  std::string ladder_retry = "10m";
  std::string shutdown_timeout = "30s";
  std::string fetch_timeout = "60s";
  bool dry_run = false;
  bool allow_mass_delete = false;
  bool refuse_history_rewrite = false;
  int parallelism = 16;
  std::string listen = "127.0.0.1:8080";
  std::string webhook_secret_file;
  std::string log_format = "text";
  source::GitCredentials git;
  CloudFlags cloud;
  KubeFlags kube;
  NotifyFlags notify;
};

bool LooksLikeUrl(const std::string& repo) {
  if (repo.find("://") != std::string::npos) return true;
  // scp-like "git@host:org/repo.git": a colon before any slash.
  size_t colon = repo.find(':');
  size_t slash = repo.find('/');
  return colon != std::string::npos && (slash == std::string::npos || colon < slash) &&
         repo.find('@') != std::string::npos;
}

struct SourceParts {
  std::unique_ptr<source::RevisionSource> source;
  std::unique_ptr<daemon::Waiter> waiter;
};

// `fetcher`: runs a URL source's fetches in a child process (null: in this thread).
Result<SourceParts> OpenSource(const WatchFlags& flags, source::ChildFetcher* fetcher) {
  SourceParts parts;
  if (LooksLikeUrl(flags.repo) || !flags.workdir.empty()) {
    if (flags.workdir.empty()) return Status::InvalidArgument("--repo URL needs --workdir DIR for the clone");
    if (flags.worktree) return Status::InvalidArgument("--worktree needs a local --repo PATH");
    source::RemoteOptions o{flags.repo, flags.ref, flags.workdir, flags.git};
    auto remote = source::RemoteRepo::Open(o);
    if (!remote.ok()) return remote.status();
    parts.source = std::make_unique<source::RemoteSource>(std::move(remote.value()), fetcher);
    auto waiter = daemon::EventWaiter::Create();
    if (!waiter.ok()) return waiter.status();
    parts.waiter = std::move(waiter.value());
    return parts;
  }
  auto repo = source::GitRepo::Open(flags.repo);
  source::WatcherOptions wo;
  if (flags.worktree) {
    std::unique_ptr<source::GitRepo> git;
    if (repo.ok()) {
      wo = source::CheckoutWatchOptions(*repo, /*watch_files=*/true);
      git = std::make_unique<source::GitRepo>(repo.value());
    } else {
      wo.tree_dir = flags.repo + "/deploy";
    }
    parts.source = std::make_unique<source::WorktreeSource>(flags.repo, std::move(git));
  } else {
    if (!repo.ok()) return repo.status().WithContext("--repo " + flags.repo);
    wo = source::CheckoutWatchOptions(*repo, /*watch_files=*/false);
    parts.source = std::make_unique<source::CheckoutSource>(repo.value());
  }
  auto watcher = source::Watcher::Create(wo);
  if (!watcher.ok()) return watcher.status().WithContext("watch " + flags.repo);
  parts.waiter = std::make_unique<daemon::WatcherWaiter>(std::move(watcher.value()));
  return parts;
}

struct WatchTimes {
  std::chrono::milliseconds poll, drift, shutdown, fetch_timeout, ladder_retry;
};

Result<WatchTimes> ParseTimes(const WatchFlags& flags) {
  WatchTimes t;
  const std::pair<const std::string*, std::chrono::milliseconds*> fields[] = {
      {&flags.poll_interval, &t.poll},
      {&flags.drift_interval, &t.drift},
      {&flags.shutdown_timeout, &t.shutdown},
      {&flags.fetch_timeout, &t.fetch_timeout},
      {&flags.ladder_retry, &t.ladder_retry}};
  const char* names[] = {"--poll-interval", "--drift-interval", "--shutdown-timeout", "--fetch-timeout",
                         "--ladder-retry"};
  for (size_t i = 0; i < 5; ++i) {
    auto d = ParseDuration(*fields[i].first);
    if (!d.ok()) return d.status().WithContext(names[i]);
    *fields[i].second = *d;
  }
  if (t.drift.count() <= 0 || t.poll.count() <= 0 || t.ladder_retry.count() <= 0)
    return Status::InvalidArgument("--poll-interval, --drift-interval and --ladder-retry must be positive");
  return t;
}

daemon::DaemonOptions DaemonOptionsOf(const WatchFlags& flags, const WatchTimes& times, const std::string& secret) {
  daemon::DaemonOptions o;
  o.reconciler.dry_run = flags.dry_run;
  o.reconciler.allow_mass_delete = flags.allow_mass_delete;
  o.reconciler.refuse_history_rewrite = flags.refuse_history_rewrite;
  o.reconciler.drift_interval = times.drift;
  o.reconciler.ladder_retry = times.ladder_retry;
  o.reconciler.tool_version = TPU_PROVISIONER_VERSION;
  o.reconciler.kube_target = flags.kube.target;
  o.poll_interval = times.poll;
  o.execute.parallelism = flags.parallelism;
  o.listen = flags.listen;
  o.webhook_secret = secret;
  o.reload_webhook_secret = [&flags] { return ReadSecret("--webhook-secret-file", flags.webhook_secret_file, kWebhookSecretEnv); };
  return o;
}

// What `watch` runs with, once it runs.
void LogStart(const WatchFlags& flags, const WatchTimes& times, const source::RevisionSource& source,
              KubeAccess* kube, int port) {
  if (kube)
    spdlog::info("kubernetes: {}; quota re-sync every {}{}", kube->server(), FormatDuration(kube->resync()),
                 flags.kube.target.empty() ? "" : "; target " + flags.kube.target);
  std::string host;
  int configured_port = 0;
  daemon::ParseListenAddress(flags.listen, &host, &configured_port);
  spdlog::info("watch: source {}; listening on {}:{}; drift check every {}{}{}", source.Describe(), host, port,
               FormatDuration(times.drift), source.remote() ? "; poll every " + FormatDuration(times.poll) : "",
               flags.dry_run ? "; dry run: nothing will be changed" : "");
}

int RunWatch(const WatchFlags& flags) {
  // Before any thread exists, so every thread inherits the mask and the
  // signals reach only the signalfd.
  if (Status s = BlockSignals(kWatchSignals); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
    return 1;
  }
  auto fail = [](const Status& s) {
    spdlog::error("watch: {}", s.ToString());
    return 1;
  };
  auto log_format = ParseLogFormat(flags.log_format);
  if (!log_format.ok()) return fail(log_format.status());
  ConfigureLogging(*log_format);
  auto times = ParseTimes(flags);
  if (!times.ok()) return fail(times.status());
  auto secret = ReadSecret("--webhook-secret-file", flags.webhook_secret_file, kWebhookSecretEnv);
  if (!secret.ok()) return fail(secret.status());

  std::unique_ptr<source::ChildFetcher> fetcher;
  if (times->fetch_timeout.count() > 0)
    fetcher = std::make_unique<source::ChildFetcher>("/proc/self/exe", times->fetch_timeout);
  auto parts = OpenSource(flags, fetcher.get());
  if (!parts.ok()) return fail(parts.status());
  source::RevisionSource& source = *parts->source;
  if (source.remote()) {
    if (Status s = source.Fetch(); !s.ok()) spdlog::warn("first fetch of {}: {}", source.Describe(), s.ToString());
  }
  // The clusters the emulator (--cloud sim) must have come from the first revision.
  manifest::Repo initial;
  if (auto rev = source.Current(); rev.ok()) initial = manifest::LoadRepo(*rev->tree);
  auto kube_access = KubeAccess::Open(flags.kube);
  if (!kube_access.ok()) return fail(kube_access.status());
  std::unique_ptr<KubeAccess> kube = std::move(kube_access.value());
  // A sharded replica names itself in the cloud's audit logs (callerSuppliedUserAgent).
  const std::string user_agent = kube && kube->shards() ? std::string("tpu-provisioner/") + TPU_PROVISIONER_VERSION +
                                                              " replica/" + kube->shards()->config().identity
                                                        : "";
  auto session = CloudSession::Open(flags.cloud, initial, user_agent);
  if (!session.ok()) return fail(session.status());
  std::optional<daemon::DaemonKube> dk;
  if (kube) dk = daemon::DaemonKube{&kube->reader(), &kube->writer(), &kube->clock(), kube->elector(),
                                    kube->shards(), kube->resync(), kube->retry_period(),
                                    kube->node_join_interval()};
  auto notify = MakeNotifier(flags.notify);
  if (!notify.ok()) {
    PrintFatalError(notify.status());
    return 1;
  }

  daemon::Daemon d(&source, parts->waiter.get(), &(*session)->connection(), (*notify)->notifier.get(),
                   dk ? &*dk : nullptr, DaemonOptionsOf(flags, *times, *secret));
  if (Status s = d.Start(); !s.ok()) return fail(s);

  daemon::ShutdownWatchdog watchdog(times->shutdown);
  auto signals = SignalWatcher::Start(kWatchSignals, [&d, &watchdog, &fetcher](int signo) {
    if (signo == SIGHUP) {
      spdlog::info("SIGHUP: reload");
      d.Reload();
      return;
    }
    spdlog::info("{}: stopping", signo == SIGTERM ? "SIGTERM" : "SIGINT");
    watchdog.Arm();
    if (fetcher) fetcher->Cancel();  // a stalled fetch must not hold the stop
    d.Stop();
  });
  if (!signals.ok()) return fail(signals.status());

  LogStart(flags, *times, source, kube.get(), d.port());
  const bool kept_lease = d.Run();
  signals->reset();
  watchdog.Disarm();
  if (!kept_lease) {
    spdlog::error("watch: lost the leader lease; exiting");
    return 1;
  }
  spdlog::info("watch: stopped");
  return 0;
}

}  // namespace

void AddWatchCommand(CLI::App& app, CommandContext& ctx) {
  auto* cmd = app.add_subcommand("watch", "Run the GitOps daemon: reconcile on every commit and drift check");
  cmd->footer("Examples:\n"
              "  tpu-provisioner watch --repo . --worktree --dry-run --cloud sim      # local work: plans every save\n"
              "  tpu-provisioner watch --repo /srv/capacity-repo --listen 0.0.0.0:8080\n"
              "  tpu-provisioner watch --repo https://github.com/acme/tpu-capacity.git --ref main \\\n"
              "      --workdir /var/lib/tpu-provisioner/repo --git-token-file /etc/tpu-provisioner/git-token");
  auto flags = std::make_shared<WatchFlags>();
  cmd->add_option("--repo", flags->repo, "A local checkout, or a git URL (with --workdir)")->required();
  cmd->add_option("--ref", flags->ref, "Branch to follow for a URL (default main)");
  cmd->add_option("--workdir", flags->workdir, "Where a URL is cloned (a bare clone, reused across restarts)");
  cmd->add_flag("--worktree", flags->worktree, "Read the files on disk, uncommitted changes included (local work)");
  cmd->add_option("--poll-interval", flags->poll_interval, "Fetch a URL source this often (default 60s)");
  cmd->add_option("--fetch-timeout", flags->fetch_timeout,
                  "Abandon a fetch when nothing arrives from the remote for this long (default 60s; 0 = never)");
  cmd->add_option("--drift-interval", flags->drift_interval,
                  "Re-list live state and correct drift this often (default 5m)");
  cmd->add_option("--ladder-retry", flags->ladder_retry,
                  "Try moving a slice back up its capacity ladder this long after it landed lower, "
                  "doubling after each failed try (default 10m)");
  cmd->add_option("--shutdown-timeout", flags->shutdown_timeout,
                  "Longest a SIGTERM may take before the process exits anyway (default 30s)");
  cmd->add_flag("--dry-run", flags->dry_run, "Plan and report; never change anything");
  cmd->add_flag("--allow-mass-delete", flags->allow_mass_delete,
                "Apply plans that delete more than a target's maxDeletePercent");
  cmd->add_flag("--refuse-history-rewrite", flags->refuse_history_rewrite,
                "After a force-push, keep the old commit in force until SIGHUP");
  cmd->add_option("--parallelism", flags->parallelism, "Actions in flight at once (default 16)");
  cmd->add_option("--listen", flags->listen, "HTTP address for /healthz /readyz /metrics /status /hooks/git");
  cmd->add_option("--webhook-secret-file", flags->webhook_secret_file,
                  std::string("File holding the webhook HMAC secret (else $") + kWebhookSecretEnv + ")");
  cmd->add_option("--log-format", flags->log_format, "text or json")->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--git-token-file", flags->git.token_file, "HTTPS token for a URL source, in a file");
  cmd->add_option("--git-token-env", flags->git.token_env, "…or the name of an environment variable holding it");
  cmd->add_option("--git-username", flags->git.username, "Basic-auth user sent with the token");
  cmd->add_option("--git-ssh-key", flags->git.ssh_key_file, "SSH private key file for ssh URLs");
  cmd->add_option("--git-known-hosts", flags->git.ssh_known_hosts_file, "known_hosts file for ssh URLs");
  AddCloudFlags(cmd, &flags->cloud);
  AddKubeFlags(cmd, &flags->kube);
  AddNotifyFlags(cmd, &flags->notify);
  cmd->callback([flags, &ctx] { ctx.exit_code = RunWatch(*flags); });
}

}  // namespace tpu::cli
