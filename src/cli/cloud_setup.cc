// Cloud flags and the cloud session (see cloud_setup.h).
#include "cli/cloud_setup.h"

#include <cstdio>

#include <spdlog/spdlog.h>

#include "base/env.h"
#include "cloud/credentials.h"

namespace tpu::cli {

void AddCloudFlags(CLI::App* cmd, CloudFlags* f) {
  cmd->add_option("--cloud", f->cloud,
                  "gcp (default), or sim[:STATEFILE] for the embedded emulator (state kept in "
                  "STATEFILE between runs)");
  cmd->add_option("--gke-endpoint", f->gke_endpoint,
                  "GKE API root (default https://container.googleapis.com/; env "
                  "CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER)");
  cmd->add_option("--compute-endpoint", f->compute_endpoint,
                  "Compute API root (default https://compute.googleapis.com/; env "
                  "CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE)");
  cmd->add_option("--sim-config", f->sim_config,
                  "With --cloud sim: emulator config JSON (operation latencies, capacity, faults)");
  cmd->add_flag("--insecure-skip-tls-verify", f->insecure_skip_tls_verify,
                "Do not verify TLS certificates (logged as a warning; for test endpoints only)");
}

void PrintFatalError(const Status& status) {
  const std::string& m = status.message();
  auto at = m.find(cloud::kNoCredentials);
  if (at == std::string::npos) {
    std::fprintf(stderr, "error: %s\n", m.c_str());
    return;
  }
  // "…; looked in: (1) …; (2) …; (3) …" → one place a line.
  std::string text = m.substr(at);
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 13, "; looked in: ") == 0) {
      out += ". Looked in, in order:\n  ";
      i += 12;
    } else if (text.compare(i, 3, "; (") == 0) {
      out += "\n  (";
      i += 2;
    } else {
      out += text[i];
    }
  }
  std::fprintf(stderr,
               "error: %s\n\nTo try tpu-provisioner without Google Cloud, run it against its embedded "
               "emulator with --cloud sim, for example:\n"
               "  tpu-provisioner plan --repo example-project --cloud sim\n",
               out.c_str());
}

std::string SimClusterLocation(const manifest::Target& target) {
  if (target.policy.location && !target.policy.location->empty()) return *target.policy.location;
  for (const auto& p : target.pools) {
    auto dash = p.location.rfind('-');
    if (dash != std::string::npos && dash > 0) return p.location.substr(0, dash);
  }
  return "us-central1";
}

CloudSession::~CloudSession() {
  connection_.reset();
  if (emulator_) emulator_->Stop();
}

Result<std::unique_ptr<CloudSession>> CloudSession::Open(const CloudFlags& flags, const manifest::Repo& repo,
                                                         const std::string& user_agent) {
  std::unique_ptr<CloudSession> session(new CloudSession());
  cloud::CloudOptions options;
  options.transport.user_agent = user_agent;
  options.endpoints.container = flags.gke_endpoint;
  options.endpoints.compute = flags.compute_endpoint;
  options.transport.insecure = flags.insecure_skip_tls_verify;

  if (flags.cloud == "sim" || flags.cloud.rfind("sim:", 0) == 0) {
    sim::CloudEmulatorConfig config;
    if (!flags.sim_config.empty()) {
      auto text = Env::Default().ReadFile(flags.sim_config);
      if (!text.ok()) return text.status().WithContext("--sim-config");
      auto parsed = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
      if (parsed.is_discarded())
        return Status::InvalidArgument("--sim-config " + flags.sim_config + ": not JSON");
      auto c = sim::CloudEmulatorConfigFromJson(parsed);
      if (!c.ok()) return c.status().WithContext("--sim-config " + flags.sim_config);
      config = std::move(c.value());
    }
    if (flags.cloud.size() > 4) config.options.state_file = flags.cloud.substr(4);
    config.options.port = 0;
    session->emulator_ = std::make_unique<sim::CloudEmulator>(config.options);
    Status s = session->emulator_->Start();
    if (!s.ok()) return s.WithContext("starting the embedded emulator");
    for (const auto& c : config.clusters) {
      s = session->emulator_->EnsureCluster(c.project, c.location, c.name, c.release_channel);
      if (!s.ok()) return s;
    }
    for (const auto& t : repo.targets) {
      s = session->emulator_->EnsureCluster(t.project, SimClusterLocation(t), t.cluster);
      if (!s.ok()) return s.WithContext("creating cluster " + t.Key() + " in the emulator");
    }
    std::string root = session->emulator_->endpoint() + "/";
    options.endpoints.container = root;
    options.endpoints.compute = root;
    options.access_token = "sim-token";
    spdlog::debug("embedded emulator at {}", root);
  } else if (flags.cloud != "gcp") {
    return Status::InvalidArgument("--cloud " + flags.cloud + ": expected gcp, sim or sim:STATEFILE");
  }
  auto connection = cloud::CloudConnection::Open(options);
  if (!connection.ok()) return connection.status();
  session->connection_ = std::move(connection.value());
  return session;
}

}  // namespace tpu::cli
